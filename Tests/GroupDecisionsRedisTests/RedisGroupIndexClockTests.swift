import Foundation
import GroupDecisions
import GroupDecisionsTesting
import ServingTestSupport
import Testing

@testable import GroupDecisionsRedis

/// The group index is kept on Redis's clock: a writer whose clock runs ahead (within the skew the
/// cache tolerates) once trimmed, on its own clock, the entries of answers in their last moments of
/// life, so a group's invalidation left those answers, and their membership, served.
@Suite("Redis cache: the group index on Redis's clock")
struct RedisGroupIndexClockTests {
    static func write(
        _ cache: RedisGroupsCache,
        _ customer: String,
        group: String,
        timeToLive: Duration
    ) async throws -> Bool {
        let generation = try await cache.invalidationGeneration(anyTransactionID: customer, in: .sandbox)
        return try await cache.setAnswer(
            AnswerWrite(
                SharedGroupsCacheConformance.answer(group),
                anyTransactionID: customer,
                in: .sandbox,
                timeToLive: timeToLive,
                groupIDs: [group],
                ifGeneration: generation
            )
        )
    }

    @Test(
        "a writer ahead leaves every member of the group listed, and the group's invalidation removes them all",
        .requires(.redisServer)
    )
    func writerAheadTrimsNothingAlive() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let onTime = try server.store(prefix: "clock")
        let ahead = try server.store(prefix: "clock", now: { Date().addingTimeInterval(120) })
        // c1's answer lives 30 s on Redis's clock; the writer ahead writes c2 in the same group.
        #expect(try await Self.write(onTime, "c1", group: "g1", timeToLive: .seconds(30)))
        // c3's answer lives 60 s: its index entry scores earlier than the writer's clock, 120 s ahead
        // (the cache tolerates a skew of 5 s; further ahead only makes the difference plain on a
        // machine slow enough to take seconds between two calls).
        #expect(try await Self.write(onTime, "c3", group: "g1", timeToLive: .seconds(60)))
        #expect(try await Self.write(ahead, "c2", group: "g1", timeToLive: .seconds(30)))
        try await onTime.invalidate(groupID: "g1")
        let left = try await [
            onTime.answer(anyTransactionID: "c1", in: .sandbox),
            onTime.answer(anyTransactionID: "c2", in: .sandbox),
            onTime.answer(anyTransactionID: "c3", in: .sandbox),
        ].compactMap { $0 }.count
        #expect(left == 0)
    }
}
