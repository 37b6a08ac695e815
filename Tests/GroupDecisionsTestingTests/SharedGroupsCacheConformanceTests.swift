import Foundation
import GroupDecisions
import GroupDecisionsTesting
import ServingTestSupport
import Testing

/// The conformance suite passes the stores that keep the contract, on their own clock and the suite's, with and without
/// a second instance, counting or not, of every concern or some; each failure reads as one line naming the check.
@Suite("Shared-cache conformance suite: caches that keep the contract pass")
struct SharedGroupsCacheConformanceTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var conformance: SharedGroupsCacheConformance
    }

    static let conforming = [
        // One process: the instance is the storage, so a second process's instance is itself.
        Case(
            testDescription: "the in-memory cache, on its own clock (the existing initializer)",
            conformance: SharedGroupsCacheConformance(makeSecondInstance: { $0 }) { InMemoryGroupsCache() }
        ),
        Case(
            testDescription: "the in-memory cache, on the suite's clock",
            conformance: SharedGroupsCacheConformance(makeSecondInstance: { $0 }) { clock in
                InMemoryGroupsCache(now: clock.now)
            }
        ),
        Case(
            testDescription: "the wrappers the broken stores share, with no fault, on their own clock",
            conformance: BrokenStore.conformance(nil, onSuiteClock: false)
        ),
        Case(
            testDescription: "the wrappers the broken stores share, with no fault, on the suite's clock",
            conformance: BrokenStore.conformance(nil, onSuiteClock: true)
        ),
        Case(
            testDescription: "a cache whose combined calls are made of the single ones, on the suite's clock",
            conformance: SharedGroupsCacheConformance(readsWhenFetchLockTaken: false, makeSecondInstance: { $0 }) {
                clock in
                ScriptedGroupsCache(
                    InMemoryGroupsCache(now: clock.now),
                    countsInvalidations: true,
                    forwardsBudget: false
                )
            }
        ),
        // `nil` from every count reading: the service then serves its copies as before the count existed.
        Case(
            testDescription: "a cache that keeps no count, its combined calls made of the single ones",
            conformance: SharedGroupsCacheConformance(readsWhenFetchLockTaken: false, makeSecondInstance: { $0 }) {
                ScriptedGroupsCache(InMemoryGroupsCache(), countsInvalidations: false, forwardsBudget: false)
            }
        ),
        Case(
            testDescription: "a store of answers and invalidations only, its fetch lock broken and left out",
            conformance: BrokenStore.conformance(.releasesAnyOwner, onSuiteClock: true) {
                SharedCaches(answers: $0.cache, invalidations: $0.cache)
            }
        ),
        Case(
            testDescription: "a store that conforms to SharedFleetBudget only",
            conformance: SharedGroupsCacheConformance(
                concerns: { SharedCaches(fleetBudget: $0) },
                makeSecondInstance: { $0.secondInstance() }
            ) { clock in BrokenBudget(fault: nil, inner: InMemoryGroupsCache(now: clock.now), now: clock.now) }
        ),
        Case(
            testDescription: "a store of rate limits only, and one of the fetch lock only, on their own clock",
            conformance: SharedGroupsCacheConformance(concerns: { SharedCaches(fetchLock: $0.1, rateLimits: $0.0) }) {
                (BrokenRateLimits(fault: nil, inner: InMemoryGroupsCache()), InMemoryGroupsCache())
            }
        ),
    ]

    @Test("a store that keeps the contract passes every check of the concerns it provides", arguments: conforming)
    func conforms(_ store: Case) async throws {
        try await store.conformance.run()
    }

    @Test("a thousand operation sequences on the suite's clock and two hundred on the cache's own pass")
    func manySequences() async throws {
        var onSuiteClock = BrokenStore.conformance(nil, onSuiteClock: true)
        onSuiteClock.seeds = Array(1_000...1_999)
        try await onSuiteClock.run(.operationSequences)
        var onOwnClock = BrokenStore.conformance(nil, onSuiteClock: false)
        onOwnClock.seeds = Array(2_000...2_199)
        try await onOwnClock.run(.operationSequences)
    }

    @Test(
        "a cache that keeps the fleet's budget, or counts invalidations, fails that check without a second instance",
        arguments: [
            (
                SharedGroupsCacheConformance.Check.fleetBudget,
                "fleetBudget: a cache that keeps the fleet's budget is shown sharing it with a second instance: "
                    + "expected makeSecondInstance, got nil"
            ),
            (
                .invalidationCount,
                "invalidationCount: a cache that counts invalidations is shown sharing its count with a second "
                    + "instance: expected makeSecondInstance, got nil"
            ),
        ]
    )
    func needsASecondInstance(_ check: SharedGroupsCacheConformance.Check, _ description: String) async throws {
        let conformance = SharedGroupsCacheConformance { InMemoryGroupsCache() }
        let failure = await #expect(throws: ConformanceFailure.self) { try await conformance.run(check) }
        #expect(failure?.description == description)
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
