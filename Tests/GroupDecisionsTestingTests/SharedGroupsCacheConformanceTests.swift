import AppStoreGroups
import Foundation
import GroupDecisions
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

/// The conformance suite passes the caches that keep the contract, on their own clock and on the
/// suite's, with and without a second instance, counting or not, keeping a budget or not; its
/// failures read as one line that names the check.
@Suite("Shared-cache conformance suite: caches that keep the contract pass")
struct SharedGroupsCacheConformanceTests {
    @Test("the in-memory cache passes every check, on its own clock (the existing initializer)")
    func inMemoryConforms() async throws {
        // One process: the instance is the storage, so a second process's instance is itself.
        try await SharedGroupsCacheConformance(makeSecondInstance: { $0 }) { InMemoryGroupsCache() }.run()
    }

    @Test("the in-memory cache passes every check on the suite's clock")
    func inMemoryConformsOnTheSuitesClock() async throws {
        try await SharedGroupsCacheConformance(makeSecondInstance: { $0 }) { clock in
            InMemoryGroupsCache(now: clock.now)
        }
        .run()
    }

    @Test("the wrapper the broken caches share, with no fault, passes every check on either clock")
    func unbrokenWrapperConforms() async throws {
        try await SharedGroupsCacheConformance(makeSecondInstance: BrokenCache.openSecondInstance) {
            BrokenCache.withoutFault()
        }
        .run()
        try await SharedGroupsCacheConformance(makeSecondInstance: BrokenCache.openSecondInstance) { clock in
            BrokenCache.withoutFault(now: clock.now)
        }
        .run()
    }

    @Test("a thousand operation sequences on the suite's clock and two hundred on the cache's own pass")
    func manySequences() async throws {
        var onSuiteClock = SharedGroupsCacheConformance(makeSecondInstance: BrokenCache.openSecondInstance) { clock in
            BrokenCache.withoutFault(now: clock.now)
        }
        onSuiteClock.seeds = Array(1_000...1_999)
        try await onSuiteClock.run(.operationSequences)
        var onOwnClock = SharedGroupsCacheConformance(makeSecondInstance: BrokenCache.openSecondInstance) {
            BrokenCache.withoutFault()
        }
        onOwnClock.seeds = Array(2_000...2_199)
        try await onOwnClock.run(.operationSequences)
    }

    @Test("a cache whose combined calls are made of the single ones passes every check, on either clock")
    func stepsConform() async throws {
        try await SharedGroupsCacheConformance(
            readsWhenFetchLockTaken: false,
            makeSecondInstance: BrokenCache.openSecondInstance
        ) {
            BrokenCache.withoutFault(combinedCallsInSteps: true)
        }
        .run()
        try await SharedGroupsCacheConformance(
            readsWhenFetchLockTaken: false,
            makeSecondInstance: BrokenCache.openSecondInstance
        ) {
            clock in BrokenCache.withoutFault(now: clock.now, combinedCallsInSteps: true)
        }
        .run()
    }

    @Test("a cache that keeps no count passes every check")
    func cacheKeepingNoCount() async throws {
        // `nil` from every count reading: the service then serves its copies as before the count
        // existed.
        try await SharedGroupsCacheConformance(readsWhenFetchLockTaken: false, makeSecondInstance: { $0 }) {
            ScriptedGroupsCache(BrokenCache.withoutFault(), countsInvalidations: false, forwardsBudget: false)
        }
        .run()
    }

    @Test("a cache that keeps the fleet's budget fails the budget check without a second instance")
    func fleetBudgetNeedsASecondInstance() async throws {
        let conformance = SharedGroupsCacheConformance { InMemoryGroupsCache() }
        let failure = await #expect(throws: ConformanceFailure.self) { try await conformance.run(.fleetBudget) }
        #expect(
            failure?.description
                == "fleetBudget: a cache that keeps the fleet's budget is shown sharing it with a second instance: "
                + "expected makeSecondInstance, got nil"
        )
    }

    @Test("a cache that counts invalidations fails the count check without a second instance")
    func invalidationCountNeedsASecondInstance() async throws {
        let conformance = SharedGroupsCacheConformance { InMemoryGroupsCache() }
        let failure = await #expect(throws: ConformanceFailure.self) { try await conformance.run(.invalidationCount) }
        #expect(
            failure?.description
                == "invalidationCount: a cache that counts invalidations is shown sharing its count with a second "
                + "instance: expected makeSecondInstance, got nil"
        )
    }

    @Test("a failure reads as one line naming the check, the requirement and both values")
    func failureDescription() {
        let failure = ConformanceFailure(
            check: .rateLimits,
            requirement: "an earlier instant never replaces a later one",
            expected: "b",
            actual: "a"
        )
        #expect(failure.description == "rateLimits: an earlier instant never replaces a later one: expected b, got a")
        let sequence = ConformanceFailure(
            check: .operationSequences,
            requirement: "a lock has one holder until its owner releases it or it expires",
            expected: "not taken",
            actual: "taken",
            seed: 7,
            operations: ["first: invalidateAll()", "second: acquireFetchLock(…) → taken"]
        )
        #expect(
            sequence.description
                == "operationSequences: a lock has one holder until its owner releases it or it expires: expected "
                + "not taken, got taken (seed 7, step 2: second: acquireFetchLock(…) → taken)"
        )
    }
}
