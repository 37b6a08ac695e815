import GroupDecisionsTesting
import Testing

@testable import GroupDecisions

/// Answers, the fetch lock and invalidations are shared only from one store: an invalidation that
/// reached another store than the answers' left a revoked answer served by every process.
struct SharedCachesTests {
    @Test("one store's concerns are all used, given as the store or piece by piece")
    func oneStore() {
        let store = InMemoryGroupsCache()
        for caches in [SharedCaches(store), SharedCaches(answers: store, fetchLock: store, invalidations: store)] {
            let used = caches.used
            #expect(used.answers != nil)
            #expect(used.fetchLock != nil)
            #expect(used.invalidations != nil)
        }
    }

    @Test("answers, fetch lock or invalidations from another store: no answer is shared, the rest stays")
    func storesMixed() {
        let (one, two) = (InMemoryGroupsCache(), InMemoryGroupsCache())
        var changed = SharedCaches(one)
        changed.invalidations = two
        let mixes = [
            SharedCaches(answers: one, fetchLock: one, rateLimits: one, fleetBudget: one, invalidations: two),
            SharedCaches(answers: one, fetchLock: two, rateLimits: one, fleetBudget: one, invalidations: one),
            changed,
        ]
        for mix in mixes {
            let used = mix.used
            #expect(used.answers == nil)
            #expect(used.fetchLock == nil)
            #expect(used.invalidations == nil)
            #expect(used.rateLimits != nil)
            #expect(used.fleetBudget != nil)
        }
    }
}
