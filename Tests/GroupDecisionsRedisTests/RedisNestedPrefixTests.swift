import Foundation
import GroupDecisions
import GroupDecisionsTesting
import ServingTestSupport
import Testing

@testable import GroupDecisionsRedis

/// `invalidateAll()` forgets the answers of its own prefix only: its `SCAN` pattern also matched
/// the keys of a prefix that extends this one with `:` (another app on the same Redis).
@Suite("Redis cache: invalidating everyone stays inside its prefix")
struct RedisNestedPrefixTests {
    @Test("a prefix that extends this one with ':' keeps its answers", .requires(.redisServer))
    func nestedPrefixUntouched() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let outer = try server.store(prefix: "app")
        let answer = SharedGroupsCacheConformance.answer("g1")
        var inner: [RedisGroupsCache] = []
        // Prefixes whose keys the pattern `app:*:groups:*` matches.
        for prefix in ["app:x", "app:sandbox", "app:sandbox:groups", "app:production:groups:y"] {
            let cache = try server.store(prefix: prefix)
            try await cache.setAnswer(answer, anyTransactionID: "c1", in: .sandbox, timeToLive: .seconds(3600))
            inner.append(cache)
        }
        try await outer.setAnswer(answer, anyTransactionID: "c1", in: .sandbox, timeToLive: .seconds(3600))
        try await outer.setAnswer(answer, anyTransactionID: "c2", in: .production, timeToLive: .seconds(3600))
        try await outer.invalidateAll()
        #expect(try await outer.answer(anyTransactionID: "c1", in: .sandbox) == nil)
        #expect(try await outer.answer(anyTransactionID: "c2", in: .production) == nil)
        var kept = 0
        for cache in inner where try await cache.answer(anyTransactionID: "c1", in: .sandbox) != nil { kept += 1 }
        #expect(kept == 4)
    }
}
