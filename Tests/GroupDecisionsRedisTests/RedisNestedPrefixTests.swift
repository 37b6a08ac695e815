import AppStoreGroups
import Foundation
import GroupDecisions
import ServingTestSupport
import Testing

@testable import GroupDecisionsRedis

/// A prefix that would nest its counters among a shorter prefix's answers is refused.
///
/// A prefix ending in `:Sandbox:groups` or `:Production:groups` would keep its counters (`generation-all`,
/// `group-count`, `invalidations`) where the shorter prefix keeps its answers, so the shorter prefix's
/// `invalidateAll()` removed them, and a write read before the longer prefix's own `invalidateAll()` was kept again.
/// Such a prefix is refused; the counters of every prefix that can be made survive a shorter prefix's invalidation.
@Suite("Redis cache: a nested prefix keeps its counters")
struct RedisNestedPrefixTests {
    @Test("a prefix ending in an environment's ':<Environment>:groups' is refused, with its line")
    func answerShapedPrefixRefused() {
        for environment in ["Sandbox", "Production"] {
            let prefix = "app:\(environment):groups"
            #expect {
                _ = try RedisGroupsCache(host: "127.0.0.1", port: 6379, keyPrefix: prefix)
            } throws: { error in
                (error as? AppStoreGroupsError)?.code == .invalidConfiguration
                    && (error as? AppStoreGroupsError)?.message
                        == "invalid Redis store: the key prefix '\(prefix)' ends in ':\(environment):groups', "
                        + "where a shorter prefix keeps its answers"
            }
        }
        // The same words elsewhere in the prefix nest nowhere: accepted.
        for prefix in ["app:sandbox:groups", "app:Sandbox:groups:y", "app:Sandbox:groups-old", "Sandbox:groups"] {
            #expect(throws: Never.self) { try RedisGroupsCache(host: "127.0.0.1", port: 6379, keyPrefix: prefix) }
        }
    }

    @Test("the counters of prefixes nested in 'app' survive its invalidateAll()", .requires(.redisServer))
    func nestedCountersUntouched() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let outer = try server.store(prefix: "app")
        for prefix in ["app:Sandbox:groups-old", "app:Sandbox:groups:y", "app:x", "app:Production"] {
            let inner = try server.store(prefix: prefix)
            let before = try await inner.invalidationGeneration(anyTransactionID: "c1", in: .sandbox)
            #expect(before.customer == 0 && before.groups == 0)
            try await inner.invalidateAll()
            try await inner.invalidate(groupID: "g9")
            let generation = try await inner.invalidationGeneration(anyTransactionID: "c1", in: .sandbox)
            #expect(generation.customer == 0 && generation.groups == 1 && generation.all != before.all)
            let count = try await inner.invalidationCount()

            try await outer.invalidateAll()

            #expect(try await inner.invalidationGeneration(anyTransactionID: "c1", in: .sandbox) == generation)
            #expect(try await inner.invalidationCount() == count)
            #expect(try await inner.setAnswer(.holding("g1", for: "c1", at: before)) == false, "\(prefix)")
            #expect(try await inner.answer(anyTransactionID: "c1", in: .sandbox) == nil)
        }
    }
}
