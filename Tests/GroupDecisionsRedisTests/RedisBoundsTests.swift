import Foundation
import GroupDecisions
import GroupDecisionsTesting
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisionsRedis

/// Whatever a caller gives the Redis store, every duration it sends is one Redis holds and every walk it makes ends.
///
/// Two bugs these pin. A time to live of `Int64.max` seconds used to saturate to `PX 9223372036854775807`, which Redis
/// refuses (`ERR invalid expire time`), so every write with it failed as a shared-cache failure (the service bounds its
/// own durations at ten years; a direct caller of the public API may pass any). And durations past the milliseconds
/// that `RedisGroupsCache.milliseconds(_:)` saturates trapped in the calls themselves: a `timeout` of more than 9.2 ×
/// 10^15 seconds (`.seconds(Int64.max)`, "no timeout") was accepted by the initializer, then the first call killed the
/// process ("arithmetic overflow" in `RedisConnectionPool.pollTimeout(now:)`, on the pool's thread), and
/// `takeBudgetToken(from:maximumWait: .seconds(Int64.max))` overflowed in `takeToken` (the saturated wait plus the
/// key's lifetime).
@Suite("Redis store: durations Redis holds, and walks that end")
struct RedisBoundsTests {
    @Test(
        "milliseconds: at least 1, at most 1,000 years, exact between",
        arguments: [
            (Duration.seconds(Int64.max), RedisGroupsCache.maximumMilliseconds),
            (.seconds(9_223_372_036_854_776), RedisGroupsCache.maximumMilliseconds),
            (.seconds(Int64.min), 1), (.zero, 1), (.nanoseconds(1), 1), (.milliseconds(1_500), 1_500),
            (.seconds(31_536_000_000), RedisGroupsCache.maximumMilliseconds),
            (.seconds(31_535_999_999), 31_535_999_999_000), (.seconds(3_600), 3_600_000),
        ]
    )
    func milliseconds(duration: Duration, expected: Int64) {
        #expect(RedisGroupsCache.milliseconds(duration) == expected)
        #expect(RedisGroupsCache.maximumMilliseconds == 31_536_000_000_000)
    }

    @Test(
        "Int64.max seconds: writes and locks with that time to live are kept, a store with that timeout answers, a budget token with that wait is taken",
        .requires(.redisServer)
    )
    func longestDurations() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let forever = Duration.seconds(Int64.max)
        let cache = try server.store(prefix: "forever", timeout: forever)
        #expect(try await cache.answer(anyTransactionID: "c1", in: .sandbox) == nil)
        let answer = SharedGroupsCacheConformance.answer("g1")
        try await cache.setAnswer(answer, anyTransactionID: "c1", in: .sandbox, timeToLive: forever)
        let write = AnswerWrite(
            answer,
            anyTransactionID: "c2",
            in: .sandbox,
            timeToLive: forever,
            groupIDs: ["g1"],
            ifGeneration: try await cache.invalidationGeneration(anyTransactionID: "c2", in: .sandbox)
        )
        #expect(try await cache.setAnswer(write))
        #expect(try await cache.acquireFetchLock(anyTransactionID: "c3", in: .sandbox, owner: "o", timeToLive: forever))
        #expect(try await cache.answer(anyTransactionID: "c1", in: .sandbox) == answer)
        #expect(try await cache.answer(anyTransactionID: "c2", in: .sandbox) == answer)
        // Kept 1,000 years: Redis reports the time left in milliseconds, within a day of it however
        // long a busy machine paused between the write and this read.
        let left = try await cache.millisecondsToLive(cache.answerKey("c1", .sandbox))
        #expect(left.map { $0 > RedisGroupsCache.maximumMilliseconds - 86_400_000 } == true)
        // The group index holds it too: invalidating the group removes the answer.
        try await cache.invalidate(groupID: "g1")
        #expect(try await cache.answer(anyTransactionID: "c2", in: .sandbox) == nil)
        // A token every 1,000 seconds: however busy the machine, the next is not banked yet.
        let budget = FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: 0.001, burst: 1)
        #expect(try await cache.takeBudgetToken(from: budget, maximumWait: forever) == .taken(wait: .zero))
        // The next is reserved up to 1,000 seconds ahead: within any wait that long.
        let next = try await cache.takeBudgetToken(from: budget, maximumWait: forever)
        guard case .taken(let wait) = next else {
            Issue.record("expected a reserved token, got \(next)")
            return
        }
        #expect(wait > .zero && wait <= .seconds(1_000))
    }

    /// A server whose `SCAN` cursor never returns to 0: `invalidateAll` must end, not walk forever.
    @Test("invalidateAll stops after its most SCAN calls with a store failure")
    func endlessCursor() async throws {
        // Every SCAN is answered with cursor 7 and no keys (after everyone's generation, set first).
        let fake = try RedisFakeServer { _, _, arguments in
            arguments.first == "SET" ? .reply(Array("+OK\r\n".utf8)) : .reply(Array("*2\r\n$1\r\n7\r\n*0\r\n".utf8))
        }
        defer { fake.stop() }
        // A generous timeout per call: the bound under test is the number of calls, and on a
        // loaded machine one of 100,000 calls may take longer than the default 250 ms.
        let store = try fake.store(timeout: .seconds(30))
        let error = await expectError { try await store.invalidateAll() }
        #expect(error?.code == .sharedCacheFailure)
        #expect(
            error?.message
                == "Redis at 127.0.0.1:\(fake.port): SCAN answers: did not finish within 100000 calls"
        )
        #expect(fake.commands.filter { $0.arguments.first == "SCAN" }.count == 100_000)
        #expect(fake.commands.count == 100_001)
    }
}
