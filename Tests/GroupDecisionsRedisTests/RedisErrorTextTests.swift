import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// Errors from the Redis store reach logs and HTTP bodies: they name the server, the command and a
/// reason of the library's own, never a key (it holds a customer id) nor Redis's own text.
@Suite("Redis store: error text")
struct RedisErrorTextTests {
    static let customer = "2000000123456789"

    @Test("a disabled command: the error names the command and Redis's code word, not the key", .requires(.redisServer))
    func disabledCommands() async throws {
        let server = try await RedisServer.start(arguments: [
            "--rename-command", "GET", "", "--rename-command", "EVAL", "",
        ])
        defer { server.stop() }
        let store = try server.store()
        defer { store.close() }
        let prefix = "Redis at 127.0.0.1:\(server.port): "
        let read = await expectError { try await store.answer(anyTransactionID: Self.customer, in: .sandbox) }
        #expect(read?.code == .sharedCacheFailure)
        #expect(read?.message == prefix + "GET answer: the server answered with an error (ERR)")
        let lock = await expectError {
            try await store.acquireFetchLock(
                anyTransactionID: Self.customer,
                in: .sandbox,
                owner: "owner-7",
                timeToLive: .seconds(1)
            )
        }
        #expect(lock?.message == prefix + "EVAL acquire-lock: the server answered with an error (ERR)")
        for error in [read, lock] {
            #expect(error.map { "\($0)".contains(Self.customer) } == false)
            #expect(error.map { "\($0)".contains("unknown command") } == false)
        }
    }

    @Test("an error reply's own text never passes, only a code word of capitals")
    func errorReplyText() async throws {
        let fake = try RedisFakeServer { _, index, _ in
            switch index {
            case 0: .reply(Array("-WRONGTYPE key test:Sandbox:groups:\(Self.customer) holds a list\r\n".utf8))
            case 1: .reply(Array("-\(Self.customer) is not allowed\r\n".utf8))
            default: .reply(Array("+\(Self.customer)\r\n".utf8))
            }
        }
        defer { fake.stop() }
        let store = try fake.store()
        defer { store.close() }
        let prefix = "Redis at 127.0.0.1:\(fake.port): "
        let messages = [
            await expectError { try await store.answer(anyTransactionID: Self.customer, in: .sandbox) }?.message,
            await expectError { try await store.invalidate(anyTransactionID: Self.customer) }?.message,
            await expectError { try await store.rateLimitedUntil(.customerGroups, in: .sandbox) }?.message,
        ]
        #expect(
            messages == [
                prefix + "GET answer: the server answered with an error (WRONGTYPE)",
                prefix + "EVAL invalidate: the server answered with an error (unknown)",
                prefix + "GET rate-limit: an unexpected status reply",
            ]
        )
    }
}
