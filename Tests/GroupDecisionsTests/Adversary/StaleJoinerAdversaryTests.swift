import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

@Suite("Adversary: a joined flight's stale answer after another process's invalidation")
struct StaleJoinerAdversaryTests {
    /// A joined flight's stale answer is judged by when the flight began.
    ///
    /// Found by an adversary pass (fixed): `GroupDecisionService.missed` exempts a `.stale` answer from the permit's
    /// `answers(callerBegunAt:countCheckInterval:)` check. A caller who begins after another
    /// process's invalidation of the customer has returned joins a flight begun before it, and is
    /// served that flight's stale fallback: the answer fetched before the invalidation (observed:
    /// source `.stale`, reason `budget`, fetchedAt 1_800_000_000, the instant of the first fetch).
    @Test("a caller who begins after another process's invalidation returned is not served the old answer stale")
    func joinerAfterRemoteInvalidationGetsNoOldStaleAnswer() async throws {
        let clock = ManualClock()
        let firstFetch = clock.date
        let shared = InMemoryGroupsCache(now: clock.now)
        let inner = StaticGroupsSource(ServiceFixtures.customers(1))
        let gated = GatedGroupsSource(inner)
        let observerA = RecordingObserver()
        let configuration = ServiceFixtures.configuration(burst: 100)
        let processA = try ServiceFixtures.service(
            gated,
            clock: clock,
            shared: shared,
            observer: observerA,
            configuration: configuration
        )
        let processB = try ServiceFixtures.service(
            StaticGroupsSource(ServiceFixtures.customers(1)),
            clock: clock,
            shared: shared,
            configuration: configuration
        )
        #expect(try await ServiceFixtures.decide(processA, "c0").source == .live)
        #expect(gated.startedCalls == 1)

        // Past the time to live: a refresh of c0 in process A reaches Apple and is held there.
        clock.advance(by: .seconds(400))
        inner.fail("c0", with: StaticGroupsSource.tooManyRequests(retryAfter: nil))
        gated.close()
        let leader = Task { try? await ServiceFixtures.decide(processA, "c0") }
        try await gated.waitForCalls(2)
        #expect(gated.startedCalls == 2)

        // Process B invalidates c0; the call returns once every process must have read the count.
        try await processB.invalidate(anyTransactionID: "c0")
        clock.advance(by: .seconds(1))

        // A request that begins after the invalidation returned: it joins A's flight, begun before.
        let missesBefore = observerA.events("cache miss").count
        let late = Task { () -> ServedDecision? in try? await ServiceFixtures.decide(processA, "c0") }
        for _ in 0..<500 where observerA.events("cache miss").count == missesBefore {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(200))
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
