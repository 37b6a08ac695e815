import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Redis store's pool: as many calls on the wire as it has connections, the rest queued within
/// their timeout, and `close()` and cancellation ending calls at once.
@Suite("Redis store: concurrency, closing and cancellation")
struct RedisConcurrencyTests {
    /// The calls `GroupDecisionService` makes for a customer nobody has cached (see
    /// `RedisRoundTripTests`): the answer (none), the fetch lock with the answer and generation, the
    /// 429 gate, a budget token, the new answer written with the lock's release.
    static func miss(_ store: RedisGroupsCache, customer: String) async throws {
        let first = try await store.answer(anyTransactionID: customer, in: .production)
        #expect(first == nil)
        let owner = UUID().uuidString
        let attempt = try await store.acquireFetchLockAndRead(
            anyTransactionID: customer,
            in: .production,
            owner: owner,
            timeToLive: .seconds(30)
        )
        #expect(attempt.acquired)
        #expect(attempt.answer == nil)
        let gate = try await store.rateLimitedUntil(.customerGroups, in: .production)
        #expect(gate == nil)
        _ = try await store.takeBudgetToken(
            from: FleetBudget(.customerGroups, in: .production, ratePerSecond: 50, burst: 50),
            maximumWait: .zero
        )
        let answer = CachedGroupsAnswer(
            kind: .groups,
            body: Array(Families.memberBody.utf8),
            fetchedAt: Date()
        )
        let kept = try await store.setAnswer(
            AnswerWrite(
                answer,
                anyTransactionID: customer,
                in: .production,
                timeToLive: .seconds(60),
                groupIDs: [],
                ifGeneration: try #require(attempt.generation)
            ),
            releasingFetchLock: owner
        )
        #expect(kept)
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    static func summary(_ durations: [Duration]) -> String {
        let sorted = durations.map(milliseconds).sorted()
        guard let low = sorted.first, let high = sorted.last else { return "none" }
        let median = sorted[sorted.count / 2]
        return String(format: "median %.1f ms (min %.1f, max %.1f, %d runs)", median, low, high, sorted.count)
    }

    @Test(
        "64 concurrent cache misses through a Redis 20 ms away: as many calls in flight as the pool has connections",
        .requires(.redisServer)
    )
    func concurrentMisses() async throws {
        let fleet = try await RedisFleet.start(proxyDelay: .milliseconds(20))
        defer { fleet.stop() }
        let proxy = try #require(fleet.proxy)
        // Generous bounds: what is proved is the pool's width, not how fast this machine is, and on
        // a busy machine the 64 tasks may take long to all start.
        let store = try fleet.store(prefix: "bench", timeout: .seconds(600))
        try await Self.miss(store, customer: "warm-up")
        var single: [Duration] = []
        for run in 0..<5 {
            let start = ContinuousClock.now
            try await Self.miss(store, customer: "single-\(run)")
            single.append(start.duration(to: .now))
        }
        var concurrent: [Duration] = []
        for run in 0..<6 {
            // The first run proves the width: the proxy passes nothing on until every connection
            // carries a call. (A pool narrower than that would time the hold out instead.)
            if run == 0 { proxy.hold(untilInFlight: store.maximumConnections, atMost: .seconds(600)) }
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for customer in 0..<64 {
                    group.addTask { try await Self.miss(store, customer: "run-\(run)-\(customer)") }
                }
                try await group.waitForAll()
            }
            if run == 0 {
                #expect(proxy.holdWasReached == true)
                #expect(proxy.peakInFlight == store.maximumConnections)
            } else {
                concurrent.append(start.duration(to: .now))
            }
        }
        #expect(store.pool.statistics.connectionsOpened == store.maximumConnections)
        print("Redis 20 ms away, one miss (5 calls): \(Self.summary(single))")
        print("Redis 20 ms away, 64 concurrent misses: \(Self.summary(concurrent))")
    }

    @Test("more callers than connections: the pool opens its maximum and the others wait their turn")
    func queuedBeyondTheMaximum() async throws {
        let fake = try RedisFakeServer { _, _, _ in .silence }
        defer { fake.stop() }
        let store = try fake.store(timeout: .seconds(600), maximumConnections: 3)
        let calls = Task {
            await withTaskGroup(of: String.self) { group in
                for customer in 0..<10 {
                    group.addTask {
                        await expectError { try await store.answer(anyTransactionID: "c\(customer)", in: .sandbox) }?
                            .message ?? ""
                    }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
        }
        // Three commands on the wire, seven calls queued behind them, none answered.
        try await waitUntil { fake.commands.count == 3 && store.pool.statistics.waiting == 7 }
        #expect(store.pool.statistics.connectionsOpened == 3)
        #expect(fake.connections == 3)
        store.close()
        let closed = "Redis at 127.0.0.1:\(fake.port): GET answer: the store is closed"
        #expect(await calls.value == Array(repeating: closed, count: 10))
    }

    @Test("connecting counts in the timeout: a server whose backlog is full fails the call within it")
    func connectingInTheTimeout() async throws {
        // A listener that never accepts, its backlog filled: further connection attempts hang.
        let listener = try LoopbackSocket(listening: ())
        var fillers: [Int32] = []
        defer { for descriptor in fillers { close(descriptor) } }
        for _ in 0..<40 {
            #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
            #endif
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL, 0) | O_NONBLOCK)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(listener.port).bigEndian)
            address.sin_addr = in_addr(s_addr: UInt32(0x7f00_0001).bigEndian)
            _ = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            fillers.append(descriptor)
        }
        let store = try RedisGroupsCache(
            host: "127.0.0.1",
            port: listener.port,
            keyPrefix: "test",
            timeout: .milliseconds(500)
        )
        defer { store.close() }
        let error = await expectError { try await store.answer(anyTransactionID: "c", in: .sandbox) }
        #expect(error?.code == .sharedCacheFailure)
        #expect(error?.message == "Redis at 127.0.0.1:\(listener.port): GET answer: timed out waiting for a connection")
    }

    @Test("close(): calls in flight end at once, later calls fail without waiting, and closing again does nothing")
    func closeEndsCalls() async throws {
        let fake = try RedisFakeServer { _, _, _ in .silence }
        defer { fake.stop() }
        let store = try fake.store(timeout: .seconds(600))
        let calls = Task {
            await withTaskGroup(of: AppStoreGroupsError?.self) { group in
                for customer in 0..<5 {
                    group.addTask {
                        await expectError { try await store.answer(anyTransactionID: "c\(customer)", in: .sandbox) }
                    }
                }
                return await group.reduce(into: [AppStoreGroupsError?]()) { $0.append($1) }
            }
        }
        // The server holds five commands it will never answer.
        try await waitUntil { fake.commands.count == 5 }
        store.close()
        store.close()
        let errors = await calls.value
        let closed = "Redis at 127.0.0.1:\(fake.port): GET answer: the store is closed"
        #expect(errors.map { $0?.code } == Array(repeating: .sharedCacheFailure, count: 5))
        #expect(errors.map { $0?.message } == Array(repeating: closed, count: 5))
        let later = await expectError { try await store.invalidate(anyTransactionID: "c") }
        #expect(later?.code == .sharedCacheFailure)
        #expect(later?.message == "Redis at 127.0.0.1:\(fake.port): EVAL invalidate: the store is closed")
        #expect(fake.commands.count == 5)
    }

    @Test("a cancelled call ends as cancelled at once, and its connection, whose reply may still come, is closed")
    func cancellation() async throws {
        let fake = try RedisFakeServer { connection, index, _ in connection == 1 && index == 0 ? .silence : .standard }
        defer { fake.stop() }
        let store = try fake.store(timeout: .seconds(600))
        defer { store.close() }
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
}
