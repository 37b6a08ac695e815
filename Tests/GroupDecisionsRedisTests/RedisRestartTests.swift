import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// A pooled connection that died while idle (a Redis restart) costs no call: it is noticed and
/// closed, or the call is sent once more on a connection opened for it.
@Suite("Redis store: dead pooled connections")
struct RedisRestartTests {
    @Test(
        "after a Redis restart on the same port, the next call on each pooled connection succeeds",
        .requires(.redisServer)
    )
    func restart() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store(timeout: .seconds(600))
        defer { store.close() }
        // Four connections at once: four calls that Redis holds until a fifth releases them (no
        // time limit: on a busy machine this task may run long after the four were sent).
        let pooled = 4
        let blocked = Task {
            try await withThrowingTaskGroup(of: RESPReply.self) { group in
                for _ in 0..<pooled {
                    group.addTask {
                        try await store.call([Array("BLPOP".utf8), Array("gate".utf8), Array("0".utf8)], "BLPOP")
                    }
                }
                return try await group.reduce(into: [RESPReply]()) { $0.append($1) }
            }
        }
        try await waitUntil {
            store.pool.statistics.connectionsOpened >= pooled && store.pool.statistics.peakRunning >= pooled
        }
        var waiting = 0
        while waiting < pooled {
            guard case .bulk(let info?) = try await store.call([Array("INFO".utf8), Array("clients".utf8)], "INFO")
            else { break }
            waiting =
                String(decoding: info, as: UTF8.self).split(whereSeparator: \.isNewline)
                .first { $0.hasPrefix("blocked_clients:") }
                .flatMap { Int($0.dropFirst("blocked_clients:".count)) } ?? 0
            if waiting < pooled { try await Task.sleep(for: .milliseconds(10)) }
        }
        _ = try await store.call([Array("RPUSH".utf8), Array("gate".utf8)] + (0..<pooled).map { _ in [49] }, "RPUSH")
        #expect(try await blocked.value.count == pooled)
        try await waitUntil { store.pool.statistics.idle >= pooled }
        let idle = store.pool.statistics.idle

        try await server.restart()
        let answer = CachedGroupsAnswer(
            kind: .groups,
            body: Array("{}".utf8),
            fetchedAt: Date(timeIntervalSince1970: 1_700_000_000)
        )
        for call in 0...idle {
            try await store.setAnswer(answer, anyTransactionID: "c\(call)", in: .sandbox, timeToLive: .seconds(60))
            #expect(try await store.answer(anyTransactionID: "c\(call)", in: .sandbox) == answer)
        }
    }

    @Test("a pooled connection closed as a command arrives: the command is sent once more, on a new connection")
    func closedOnArrival() async throws {
        let fake = try RedisFakeServer { connection, index, _ in connection == 1 && index == 1 ? .close : .standard }
        defer { fake.stop() }
        let store = try fake.store()
        defer { store.close() }
        #expect(try await store.answer(anyTransactionID: "x", in: .sandbox) == nil)
        #expect(try await store.answer(anyTransactionID: "y", in: .sandbox) == nil)
        let keyX = "test:Sandbox:groups:x"
        let keyY = "test:Sandbox:groups:y"
        #expect(
            fake.commands == [
                .init(connection: 1, arguments: ["GET", keyX]), .init(connection: 1, arguments: ["GET", keyY]),
                .init(connection: 2, arguments: ["GET", keyY]),
            ]
        )
        #expect(store.pool.statistics.retries == 1)
    }

    @Test("no second attempt for a command that may have run and must not run twice, nor a third for any")
    func retryBounds() async throws {
        let fake = try RedisFakeServer { connection, index, _ in
            (connection < 3 && index == 1) || connection == 3 ? .close : .standard
        }
        defer { fake.stop() }
        let store = try fake.store()
        defer { store.close() }
        #expect(try await store.answer(anyTransactionID: "x", in: .sandbox) == nil)
        // Not idempotent, and its bytes reached the server: it fails rather than risk running twice.
        let once = await expectError {
            try await store.call([Array("INCR".utf8), Array("n".utf8)], "INCR counter", isIdempotent: false)
        }
        #expect(once?.message == "Redis at 127.0.0.1:\(fake.port): INCR counter: the server closed the connection")
        // Idempotent, but the connection opened for the second attempt closes too: no third.
        #expect(try await store.answer(anyTransactionID: "z", in: .sandbox) == nil)
        let twice = await expectError { try await store.answer(anyTransactionID: "y", in: .sandbox) }
        #expect(twice?.message == "Redis at 127.0.0.1:\(fake.port): GET answer: the server closed the connection")
        #expect(fake.commands.map(\.connection) == [1, 1, 2, 2, 3])
        #expect(fake.commands.map { $0.arguments[0] } == ["GET", "INCR", "GET", "GET", "GET"])
        #expect(store.pool.statistics.retries == 1)
    }

    @Test("a call on a fresh connection that the server closes is not sent again")
    func freshConnectionClosed() async throws {
        let fake = try RedisFakeServer { _, _, _ in .close }
        defer { fake.stop() }
        let store = try fake.store()
        defer { store.close() }
        let error = await expectError { try await store.invalidate(anyTransactionID: "x") }
        #expect(error?.message == "Redis at 127.0.0.1:\(fake.port): EVAL invalidate: the server closed the connection")
        #expect(fake.commands.count == 1)
        #expect(store.pool.statistics.retries == 0)
    }
}
