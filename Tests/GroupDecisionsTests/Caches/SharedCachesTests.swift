import GroupDecisionsTesting
import Testing

@testable import GroupDecisions

/// Answers, the fetch lock and invalidations are shared only from one store: an invalidation that
/// reached another store than the answers' left a revoked answer served by every process.
struct SharedCachesTests {
    @Test("one store's concerns are all used")
    func oneStore() {
        let store = InMemoryGroupsCache()
        let used = SharedCaches(store).used
        #expect(used.answers != nil)
        #expect(used.fetchLock != nil)
        #expect(used.invalidations != nil)
        let piecewise = SharedCaches(answers: store, fetchLock: store, invalidations: store).used
        #expect(piecewise.answers != nil)
        #expect(piecewise.fetchLock != nil)
        #expect(piecewise.invalidations != nil)
    }

    @Test("answers, fetch lock or invalidations from another store: no answer is shared, the rest stays")
    func storesMixed() {
        let first = InMemoryGroupsCache()
        let second = InMemoryGroupsCache()
        let mixes = [
            SharedCaches(
                answers: first,
                fetchLock: first,
                rateLimits: first,
                fleetBudget: first,
                invalidations: second
            ),
            SharedCaches(
                answers: first,
                fetchLock: second,
                rateLimits: first,
                fleetBudget: first,
                invalidations: first
            ),
        ]
        for mix in mixes {
            let used = mix.used
            #expect(used.answers == nil)
            #expect(used.fetchLock == nil)
            #expect(used.invalidations == nil)
            #expect(used.rateLimits != nil)
            #expect(used.fleetBudget != nil)
        }
        var changed = SharedCaches(first)
        changed.invalidations = second
        #expect(changed.used.answers == nil)
    }
}
