import Foundation
import GroupDecisions
import GroupDecisionsTesting
import ServingTestSupport
import Testing

@testable import GroupDecisionsRedis

/// A group's invalidation removes every answer that holds the group: each member is listed in the
/// group's index, on Redis's clock, or, beyond the list's bound, the group's overflow mark turns the
/// invalidation into one of everyone for as long as any answer left off the list lives.
@Suite("Redis group index: a group's invalidation reaches every answer that holds it")
struct RedisGroupIndexTests {
    // The bug the short answer pins: the overflow mark was set with the time to live of the *last* write that found the
    // list full (`SET …:members-overflow:G 1 PX life`), so a later write with a shorter life (two services with
    // different `freshness.maximumStaleness`, a rolling deploy that changes `--max-age`) shortened the mark below the
    // life of an earlier answer left off the list. Once the mark lapsed, `invalidate(groupID:)` no longer fell back to
    // invalidating everyone, and the earlier answer, never listed, survived the group's invalidation. The list's own
    // expiry is only ever raised (`PEXPIRE` when `PTTL < life`); the mark is too.
    @Test(
        "a group listing more customers than the bound turns its invalidation into one of everyone, however short the last answer left off it lives",
        .requires(.redisServer)
    )
    func overflowInvalidatesEveryone() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let cache = try server.store(prefix: "full", timeout: .seconds(60))
        // No customer or group was invalidated: one generation serves every customer's write.
        let none = try await cache.invalidationGeneration(anyTransactionID: "m0", in: .sandbox)
        let members = RedisGroupsCache.maximumMembersPerGroup
        // Fill the list: 10,000 customers with an hour to live.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<16 {
                group.addTask {
                    for index in stride(from: lane, to: members, by: 16) {
                        let kept = try await cache.setAnswer(.holding("G", for: "m\(index)", at: none))
                        #expect(kept)
                    }
                }
            }
            try await group.waitForAll()
        }
        let listed = try await cache.call([Array("ZCARD".utf8), Array("full:Sandbox:members:G".utf8)], "ZCARD")
        #expect(listed == .integer(Int64(members)))
        // An hour-long answer that does not fit: left off the list, the mark set for an hour. Then
        // another service, with a one-second maximum age, writes another answer holding G, which
        // expires (and, before the fix, the mark with it).
        #expect(try await cache.setAnswer(.holding("G", for: "late", at: none)))
        #expect(try await cache.setAnswer(.holding("G", for: "short", timeToLive: .seconds(1), at: none)))
        try await waitUntil { try await cache.answer(anyTransactionID: "short", in: .sandbox) == nil }
        let answer = SharedGroupsCacheConformance.answer("G")
        try await cache.setAnswer(answer, anyTransactionID: "outsider", in: .sandbox, timeToLive: .seconds(600))
        try await cache.invalidate(groupID: "G")
        // The answers beyond the bound were not listed, so everyone went, the outsider too.
        for customer in ["m0", "m\(members - 1)", "late", "outsider"] {
            #expect(try await cache.answer(anyTransactionID: customer, in: .sandbox) == nil, "\(customer)")
        }
    }

    /// A writer whose clock runs ahead (within the skew the cache tolerates) once trimmed, on its
    /// own clock, the index entries of answers in their last moments of life, so a group's
    /// invalidation left those answers, and their membership, served.
    @Test(
        "a writer ahead leaves every member of the group listed, and the group's invalidation removes them all",
        .requires(.redisServer)
    )
    func writerAheadTrimsNothingAlive() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let onTime = try server.store(prefix: "clock")
        let ahead = try server.store(prefix: "clock", now: { Date().addingTimeInterval(120) })
        // No customer or group was invalidated: one generation serves every customer's write.
        let none = try await onTime.invalidationGeneration(anyTransactionID: "c1", in: .sandbox)
        // c1's answer lives 30 s on Redis's clock; the writer ahead writes c2 in the same group.
        #expect(try await onTime.setAnswer(.holding("g1", for: "c1", timeToLive: .seconds(30), at: none)))
        // c3's answer lives 60 s: its index entry scores earlier than the writer's clock, 120 s ahead
        // (the cache tolerates a skew of 5 s; further ahead only makes the difference plain on a
        // machine slow enough to take seconds between two calls).
        #expect(try await onTime.setAnswer(.holding("g1", for: "c3", timeToLive: .seconds(60), at: none)))
        #expect(try await ahead.setAnswer(.holding("g1", for: "c2", timeToLive: .seconds(30), at: none)))
        try await onTime.invalidate(groupID: "g1")
        for customer in ["c1", "c2", "c3"] {
            #expect(try await onTime.answer(anyTransactionID: customer, in: .sandbox) == nil, "\(customer)")
        }
    }
}
