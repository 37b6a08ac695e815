import Foundation
import GroupDecisions
import GroupDecisionsTesting
import ServingTestSupport
import Testing

@testable import GroupDecisionsRedis

/// A full group list's overflow mark outlives every answer left off the list.
///
/// The bug it pins: a group's overflow mark is set with the time to live of the *last* write that found
/// the list full (`SET …:members-overflow:G 1 PX life`), so a later write with a shorter life
/// shortens the mark below the life of an earlier answer left off the list. Once the mark lapses,
/// `invalidate(groupID:)` no longer falls back to invalidating everyone, and the earlier answer,
/// never listed, survives the group's invalidation.
///
/// Two services on one Redis with different `freshness.maximumStaleness` (a rolling deploy that changes
/// `--max-age`, say from 3600 to 60) write exactly this. The list's own expiry is only ever raised
/// (`PEXPIRE` when `PTTL < life`); the mark should be too.
@Suite("Redis group index: a full group list's overflow mark outlives every answer left off it")
struct RedisGroupOverflowFlagTests {
    @Test("an answer left off a full list is invalidated with its group", .requires(.redisServer))
    func overflowMarkNotShortened() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let cache = try server.store(prefix: "full", timeout: .seconds(10))
        defer { cache.close() }
        let answer = SharedGroupsCacheConformance.answer("G")
        // No customer or group was invalidated: one generation serves every customer's write.
        let none = try await cache.invalidationGeneration(anyTransactionID: "m0", in: .sandbox)
        func write(_ customer: String, life: Duration) async throws -> Bool {
            try await cache.setAnswer(
                AnswerWrite(
                    answer,
                    anyTransactionID: customer,
                    in: .sandbox,
                    timeToLive: life,
                    groupIDs: ["G"],
                    ifGeneration: none
                )
            )
        }
        // Fill the list: 10,000 customers with an hour to live.
        let members = RedisGroupsCache.maximumMembersPerGroup
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for worker in 0..<16 {
                group.addTask {
                    for index in stride(from: worker, to: members, by: 16) {
                        guard try await write("m\(index)", life: .seconds(3600)) else { return false }
                    }
                    return true
                }
            }
            for try await kept in group { #expect(kept) }
        }
        // An hour-long answer that does not fit: left off the list, the mark set for an hour.
        #expect(try await write("late", life: .seconds(3600)))
        // Another service, with a one-second maximum age, writes another answer holding G.
        #expect(try await write("short", life: .seconds(1)))
        // The short answer (and, on main, the mark with it) expires.
        try await Task.sleep(for: .milliseconds(2500))
        #expect(try await cache.answer(anyTransactionID: "short", in: .sandbox) == nil)

        try await cache.invalidate(groupID: "G")

        // Expected: every answer holding G is gone, "late" included (through the overflow's
        // invalidation of everyone). On main "late" is still served: 1 answer survives.
        #expect(try await cache.answer(anyTransactionID: "m0", in: .sandbox) == nil)
        #expect(try await cache.answer(anyTransactionID: "late", in: .sandbox) == nil)
    }
}
