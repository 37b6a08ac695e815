import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

@Suite("Decision service: a joined flight's stale answer is judged against another process's invalidation")
struct LateJoinerStaleTests {
    /// A joined flight's stale answer is judged by when the flight began.
    ///
    /// Found by a review (fixed): `GroupDecisionService.missed` exempts a `.stale` answer from the permit's
    /// `answers(callerBegunAt:countCheckInterval:)` check. A caller who begins after another
    /// process's invalidation of the customer has returned joins a flight begun before it, and is
    /// served that flight's stale fallback: the answer fetched before the invalidation (observed:
    /// source `.stale`, reason `budget`, fetchedAt 1_800_000_000, the instant of the first fetch).
    @Test("a caller who begins after another process's invalidation returned is not served the old answer stale")
    func joinerAfterRemoteInvalidationGetsNoOldStaleAnswer() async throws {
        let fleet = try TwoProcessFleet(customers: Families.customers(1))
        let (clock, inner, gated, processA, processB) = (
            fleet.clock, fleet.inner, fleet.gated, fleet.processA, fleet.processB
        )
        let firstFetch = clock.date
        #expect(try await processA.decide("c0").source == .live)
        #expect(gated.startedCalls == 1)

        // Past the time to live: a refresh of c0 in process A reaches Apple and is held there.
        clock.advance(by: .seconds(400))
        inner.fail("c0", with: StaticGroupsSource.tooManyRequests(retryAfter: nil))
        gated.close()
        let leader = Task { try? await processA.decide("c0") }
        try await gated.waitForCalls(2)
        #expect(gated.startedCalls == 2)

        // Process B invalidates c0; the call returns once every process must have read the count.
        try await processB.invalidate(anyTransactionID: "c0")
        clock.advance(by: .seconds(1))

        // A request that begins after the invalidation returned: it joins A's flight, begun before.
        let late = try await fleet.lateCallerOfA { () -> ServedDecision? in
            try? await processA.decide("c0")
        }
        gated.open()
        _ = await leader.value
        let served = await late.value
        // Before the fix: served stale (budget) with the answer fetched at 1_800_000_000, before the invalidation.
        #expect(
            served.map { $0.fetchedAt > firstFetch } ?? true,
            "served \(String(describing: served?.source)) \(String(describing: served?.staleReason)) fetched at \(String(describing: served?.fetchedAt.timeIntervalSince1970))"
        )
    }
}

/// Two services sharing one in-memory cache on one manual clock, process A's calls to Apple behind
/// a gate: the setting of the late-caller tests.
struct TwoProcessFleet {
    let clock = ManualClock()
    let inner: StaticGroupsSource
    let gated: GatedGroupsSource
    let observerA = RecordingObserver()
    let processA: GroupDecisionService
    let processB: GroupDecisionService

    init(customers: [String: GetCustomerGroupsResponse]) throws {
        let shared = InMemoryGroupsCache(now: clock.now)
        inner = StaticGroupsSource(customers)
        gated = GatedGroupsSource(inner)
        processA =
            try ServiceHarness(
                source: gated,
                sharedCache: shared,
                clock: clock,
                observer: observerA,
                configuration: .exactCounts(burst: 100)
            )
            .service
        processB =
            try ServiceHarness(
                source: StaticGroupsSource(customers),
                sharedCache: shared,
                clock: clock,
                configuration: .exactCounts(burst: 100)
            )
            .service
    }

    /// Starts a call in process A and returns once it has missed its copy and joined the flight
    /// under way (its cache miss seen, then a moment for it to join).
    func lateCallerOfA<T: Sendable>(_ call: @escaping @Sendable () async -> T) async throws -> Task<T, Never> {
        let missesBefore = observerA.events("cache miss").count
        let late = Task { await call() }
        try await waitUntil { observerA.events("cache miss").count > missesBefore }
        try await Task.sleep(for: .milliseconds(200))
        return late
    }
}
