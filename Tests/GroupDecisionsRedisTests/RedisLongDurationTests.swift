import Foundation
import GroupDecisions
import GroupDecisionsTesting
import ServingTestSupport
import Testing

@testable import GroupDecisionsRedis

/// A duration Redis cannot hold is cut, not sent.
///
/// A time to live of `Int64.max` seconds used to
/// saturate to `PX 9223372036854775807`, which Redis refuses (`ERR invalid expire time`), so every
/// write with it failed as a shared-cache failure. The service bounds its own durations at ten
/// years; a direct caller of the public API may pass any.
@Suite("Redis cache: durations beyond what Redis holds")
struct RedisLongDurationTests {
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

    @Test("writes and locks with a time to live of Int64.max seconds are kept", .requires(.redisServer))
    func longestTimeToLiveKept() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let cache = try server.store(prefix: "forever")
        defer { cache.close() }
        let forever = Duration.seconds(Int64.max)
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
        let ttl = try await cache.call([Array("PTTL".utf8), cache.answerKey("c1", .sandbox)], "PTTL")
        guard case .integer(let left) = ttl else {
            Issue.record("no answer: \(ttl)")
            return
        }
        #expect(left > RedisGroupsCache.maximumMilliseconds - 86_400_000)
        // The group index holds it too: invalidating the group removes the answer.
        try await cache.invalidate(groupID: "g1")
        #expect(try await cache.answer(anyTransactionID: "c2", in: .sandbox) == nil)
    }
}
