import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// The Redis store's pool: as many calls on the wire as it has connections, the rest queued within their timeout,
/// `close()` and cancellation ending calls at once, and a pooled connection that died while idle (a Redis restart)
/// costing no call: it is noticed and closed, or the call is sent once more on a connection opened for it.
@Suite("Redis store's pool: concurrency, closing, cancellation and dead connections")
struct RedisConcurrencyTests {
    /// A service over `store`, on a budget no test spends: each decision for a customer nobody has cached makes the
    /// five calls of a miss (see `RedisRoundTripTests`): the answer (none), the fetch lock with the answer and
    /// generation, the 429 gate, a budget token, the new answer written with the lock's release.
    static func service(_ store: RedisGroupsCache) throws -> GroupDecisionService {
        try fleetService(StubGroupsSource(), store) {
            $0.rateLimits.requestsPerSecond = [.sandbox: 100_000, .production: 100_000]
            $0.rateLimits.requestBurst = [.sandbox: 100_000]
            // A new bucket then starts full: no token is reserved ahead.
            $0.rateLimits.maximumRateLimitWait = .zero
        }
    }

    /// How long each run of `body` took: the median, the shortest and the longest.
    static func timed(_ runs: ClosedRange<Int>, _ body: (Int) async throws -> Void) async rethrows -> String {
        var milliseconds: [Double] = []
        for run in runs {
            let start = ContinuousClock.now
            try await body(run)
            let (seconds, attoseconds) = start.duration(to: .now).components
            milliseconds.append(Double(seconds) * 1e3 + Double(attoseconds) / 1e15)
        }
        let sorted = milliseconds.sorted()
        guard let low = sorted.first, let high = sorted.last else { return "none" }
        let median = sorted[sorted.count / 2]
        return String(format: "median %.1f ms (min %.1f, max %.1f, %d runs)", median, low, high, sorted.count)
    }

    @Test(
        "64 concurrent cache misses through a Redis 20 ms away: as many calls in flight as the pool has connections",
        .requires(.redisServer)
    )
    func concurrentMisses() async throws {
        let server = try await RedisServer.start(proxyDelay: .milliseconds(20))
        defer { server.stop() }
        let proxy = try #require(server.proxy)
        // Generous bounds: what is proved is the pool's width, not how fast this machine is, and on
        // a busy machine the 64 tasks may take long to all start.
        let store = try server.store(prefix: "bench", timeout: .seconds(600))
        let service = try Self.service(store)
        #expect(try await service.decide("warm-up").source == .live)
        let single = try await Self.timed(1...5) { run in
            let served = try await service.decide("single-\(run)")
            #expect(served.source == .live)
        }
        /// 64 misses at once, each of a customer nobody asked for before.
        func misses(_ run: Int) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for customer in 0..<64 {
                    group.addTask {
                        let served = try await service.decide("run-\(run)-\(customer)")
                        #expect(served.source == .live)
                    }
                }
                try await group.waitForAll()
            }
        }
        // The first run proves the width: the proxy passes nothing on until every connection
        // carries a call. (A pool narrower than that would time the hold out instead.)
        proxy.hold(untilInFlight: store.maximumConnections, atMost: .seconds(600))
        try await misses(0)
        #expect(proxy.holdWasReached == true)
        #expect(proxy.peakInFlight == store.maximumConnections)
        let concurrent = try await Self.timed(1...5, misses)
        #expect(store.pool.statistics.connectionsOpened == store.maximumConnections, "\(store.pool.statistics)")
        print("Redis 20 ms away, one miss (5 calls): \(single)")
        print("Redis 20 ms away, 64 concurrent misses: \(concurrent)")
    }

    @Test(
        "more callers than connections wait their turn; close() ends the calls on the wire and those queued at once, later calls fail without waiting, and closing again does nothing"
    )
    func queuedAndClosed() async throws {
        let fake = try RedisFakeServer { _, _, _ in .silence }
        defer { fake.stop() }
        let store = try fake.store(timeout: .seconds(600), maximumConnections: 3)
        let calls = Task {
            await withTaskGroup(of: AppStoreGroupsError?.self) { group in
                for customer in 0..<10 {
                    group.addTask {
                        await expectError { try await store.answer(anyTransactionID: "c\(customer)", in: .sandbox) }
                    }
                }
                return await group.reduce(into: [AppStoreGroupsError?]()) { $0.append($1) }
            }
        }
        // Three commands on the wire, seven calls queued behind them, none answered.
        try await waitUntil { fake.commands.count == 3 && store.pool.statistics.waiting == 7 }
        #expect(store.pool.statistics.connectionsOpened == 3)
        #expect(fake.connections == 3)
        store.close()
        store.close()
        let errors = await calls.value
        let closed = "Redis at 127.0.0.1:\(fake.port): GET answer: the store is closed"
        #expect(errors.map { $0?.code } == Array(repeating: .sharedCacheFailure, count: 10))
        #expect(errors.map { $0?.message } == Array(repeating: closed, count: 10))
        let later = await expectError { try await store.invalidate(anyTransactionID: "c") }
        #expect(later?.code == .sharedCacheFailure)
        #expect(later?.message == "Redis at 127.0.0.1:\(fake.port): EVAL invalidate: the store is closed")
        #expect(fake.commands.count == 3)
    }

    @Test("connecting counts in the timeout: a server whose backlog is full fails the call within it")
    func connectingInTheTimeout() async throws {
        // A listener that never accepts, its backlog filled: further connection attempts hang.
        let listener = try LoopbackSocket(listening: ())
        let fillers = (0..<40).compactMap { _ in LoopbackSocket.dial(listener.port, blocking: false) }
        defer { for descriptor in fillers { close(descriptor) } }
        let store = try listener.store(timeout: .milliseconds(500))
        let error = await expectError { try await store.answer(anyTransactionID: "c", in: .sandbox) }
        #expect(error?.code == .sharedCacheFailure)
        #expect(error?.message == "Redis at 127.0.0.1:\(listener.port): GET answer: timed out waiting for a connection")
    }

    @Test("a cancelled call ends as cancelled at once, and its connection, whose reply may still come, is closed")
    func cancellation() async throws {
        let fake = try RedisFakeServer { connection, index, _ in connection == 1 && index == 0 ? .silence : .standard }
        defer { fake.stop() }
        let store = try fake.store(timeout: .seconds(600))
        let call = Task { await expectError { try await store.answer(anyTransactionID: "c", in: .sandbox) } }
        try await waitUntil { fake.commands.count == 1 }
        call.cancel()
        let error = await call.value
        #expect(error?.code == .cancelled)
        #expect(error?.message == "Redis at 127.0.0.1:\(fake.port): GET answer: cancelled")
        try await waitUntil { store.pool.statistics.connectionsDiscarded == 1 }
        // The next call gets a connection of its own.
        #expect(try await store.answer(anyTransactionID: "c", in: .sandbox) == nil)
        #expect(fake.connections == 2)
    }

    @Test(
        "after a Redis restart on the same port, the next call on each pooled connection succeeds",
        .requires(.redisServer)
    )
    func restart() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store(timeout: .seconds(600))
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
        try await waitUntil {
            let info = try await store.send(["INFO", "clients"]).bulkValue
            return String(decoding: info, as: UTF8.self).contains("blocked_clients:\(pooled)\r")
        }
        _ = try await store.call([Array("RPUSH".utf8), Array("gate".utf8)] + (0..<pooled).map { _ in [49] }, "RPUSH")
        #expect(try await blocked.value.count == pooled)
        try await waitUntil { store.pool.statistics.idle >= pooled }
        let idle = store.pool.statistics.idle

        try await server.restart()
        let answer = SharedGroupsCacheConformance.answer("g1")
        for call in 0...idle {
            try await store.setAnswer(answer, anyTransactionID: "c\(call)", in: .sandbox, timeToLive: .seconds(60))
            #expect(try await store.answer(anyTransactionID: "c\(call)", in: .sandbox) == answer)
        }
    }

    @Test(
        "a pooled connection closed as a command arrives: the command is sent once more, on a new connection, unless it may have run and must not run twice; never a third time; a call on a fresh connection the server closes is not sent again"
    )
    func retryBounds() async throws {
        // The second command of every connection, and every command of the fourth and later, meet a closed connection.
        let fake = try RedisFakeServer { connection, index, _ in index == 1 || connection >= 4 ? .close : .standard }
        defer { fake.stop() }
        let store = try fake.store()
        #expect(try await store.answer(anyTransactionID: "x", in: .sandbox) == nil)
        // Sent once more, on a new connection: answered.
        #expect(try await store.answer(anyTransactionID: "y", in: .sandbox) == nil)
        // Not idempotent, and its bytes reached the server: it fails rather than risk running twice.
        let once = await expectError {
            try await store.call([Array("INCR".utf8), Array("n".utf8)], "INCR counter", isIdempotent: false)
        }
        #expect(once?.message == "Redis at 127.0.0.1:\(fake.port): INCR counter: the server closed the connection")
        // Idempotent, but the connection opened for the second attempt closes too: no third.
        #expect(try await store.answer(anyTransactionID: "z", in: .sandbox) == nil)
        let twice = await expectError { try await store.answer(anyTransactionID: "w", in: .sandbox) }
        #expect(twice?.message == "Redis at 127.0.0.1:\(fake.port): GET answer: the server closed the connection")
        // Every connection is gone: the next call opens a fresh one, which is not tried again.
        let fresh = await expectError { try await store.answer(anyTransactionID: "v", in: .sandbox) }
        #expect(fresh?.message == "Redis at 127.0.0.1:\(fake.port): GET answer: the server closed the connection")
        let key = { (customer: String) in "test:Sandbox:groups:\(customer)" }
        #expect(
            fake.commands == [
                .init(connection: 1, arguments: ["GET", key("x")]), .init(connection: 1, arguments: ["GET", key("y")]),
                .init(connection: 2, arguments: ["GET", key("y")]), .init(connection: 2, arguments: ["INCR", "n"]),
                .init(connection: 3, arguments: ["GET", key("z")]), .init(connection: 3, arguments: ["GET", key("w")]),
                .init(connection: 4, arguments: ["GET", key("w")]), .init(connection: 5, arguments: ["GET", key("v")]),
            ]
        )
        #expect(store.pool.statistics.retries == 2)
    }

    @Test("a connection idle for its lifetime is closed, not counted as a surprise, and the next call opens one")
    func idleConnectionsClose() async throws {
        let fake = try RedisFakeServer()
        defer { fake.stop() }
        let store = try fake.store(idleLifetime: .milliseconds(200))
        #expect(try await store.answer(anyTransactionID: "a", in: .sandbox) == nil)
        try await waitUntil(atMost: .seconds(60)) { fake.openConnections == 0 }
        #expect(try await store.answer(anyTransactionID: "b", in: .sandbox) == nil)
        #expect(store.pool.statistics.connectionsOpened == 2)
        #expect(store.pool.statistics.connectionsDiscarded == 0)
        #expect(fake.connections == 2)
    }
}
