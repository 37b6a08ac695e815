import AppStoreGroups
import Foundation
import GroupDecisions
import GroupDecisionsTesting
import ServingTestSupport
import Synchronization
import Testing

@testable import GroupDecisionsRedis

/// A store over an app's own client: every command goes through ``RedisCommandSending``, with the keys, scripts and
/// values of a store with its own pool (the conformance suite's second instance is one), and a client's failure is a
/// store failure that names the command and the error's type, never its text.
@Suite("Redis cache: over an app's own client")
struct RedisClientSeamTests {
    /// An app's client: it forwards each command to a pool of its own, and counts them.
    final class ForwardingClient: RedisCommandSending {
        let pool: RedisConnectionPool
        let labels = Mutex<[String]>([])

        init(port: Int) {
            pool = RedisConnectionPool(
                settings: RedisConnectionPool.Settings(
                    host: "127.0.0.1",
                    port: port,
                    maximumConnections: 8,
                    maximumReplyBytes: 4 << 20,
                    connectTimeout: .seconds(10),
                    idleLifetime: .seconds(60)
                )
            )
        }

        deinit { pool.close() }

        func send(_ command: RedisCommand) async throws -> RESPReply {
            labels.withLock { $0.append(command.label) }
            return try await pool.send(command)
        }
    }

    /// A client whose every call fails with a message that quotes a key.
    struct FailingClient: RedisCommandSending {
        struct Refusal: Error, CustomStringConvertible {
            var description: String { "no connection for GET app:Sandbox:groups:customer-42" }
        }

        func send(_ command: RedisCommand) async throws -> RESPReply { throw Refusal() }
    }

    @Test("the conformance suite passes over an app's client", .requires(.redisServer))
    func conforms() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let client = ForwardingClient(port: server.port)
        try await RedisConformanceTests.conformance(server, client: client).run()
        #expect(client.labels.withLock { $0.contains("EVAL take-budget-token") })
    }

    @Test(
        "a client's error is a store failure naming the command and the error's type, not its text; the prefixes a store with a pool refuses are refused"
    )
    func clientErrors() async throws {
        let store = try RedisGroupsCache(client: FailingClient(), keyPrefix: "app")
        #expect(store.host == "" && store.port == 0 && store.maximumConnections == 0)
        do {
            _ = try await store.answer(anyTransactionID: "customer-42", in: .sandbox)
            Issue.record("answered without a client")
        } catch {
            #expect(error.code == .sharedCacheFailure)
            #expect(error.message == "Redis: GET answer: the client failed (Refusal)")
        }
        for prefix in ["", "app:Sandbox:groups"] {
            #expect(throws: AppStoreGroupsError.self) {
                try RedisGroupsCache(client: FailingClient(), keyPrefix: prefix)
            }
        }
    }
}
