import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

@Suite("Adversary: a joined flight's not-found answer after another process's invalidation")
struct NegativeJoinerAdversaryTests {
    /// A joined flight's not-found is judged by when the flight began.
    ///
    /// Found by an adversary pass (fixed): `SingleFlight.runReportingPermit` hands a flight's error to every caller who joined it,
    /// and `GroupDecisionService.missed` applies the permit's
    /// `answers(callerBegunAt:countCheckInterval:)` only to answers: a caller who begins after
    /// another process's invalidation (the purchase's notification) returned joins a flight whose
    /// request went to Apple before it, and is refused with its `transactionIDNotFound`. Observed:
    /// the late caller is refused with transactionIDNotFound instead of being served the new groups.
    @Test("a caller who begins after another process's invalidation returned is not refused with an older not-found")
    func joinerAfterRemoteInvalidationGetsNoOldNotFound() async throws {
        let clock = ManualClock()
        let shared = InMemoryGroupsCache(now: clock.now)
        let inner = StaticGroupsSource([:])
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
            StaticGroupsSource([:]),
            clock: clock,
            shared: shared,
            configuration: configuration
        )
        // Apple does not know c0 yet when process A's request reaches it; the answer is held.
        gated.close()
        let leader = Task { () -> AppStoreGroupsError.Code? in
            do {
                _ = try await ServiceFixtures.decide(processA, "c0")
                return nil
            } catch { return (error as? AppStoreGroupsError)?.code }
        }
        try await gated.waitForCalls(1)
        #expect(gated.startedCalls == 1)

        // The purchase completes; its notification invalidates c0 through process B.
        inner.setAnswer(ServiceFixtures.family, for: "c0")
        try await processB.invalidate(anyTransactionID: "c0")
        clock.advance(by: .seconds(1))

        // A request that begins after the invalidation returned: it joins A's flight, begun before.
        let missesBefore = observerA.events("cache miss").count
        let late = Task { () -> String in
            do {
                return "served \(try await ServiceFixtures.decide(processA, "c0").source)"
            } catch { return "refused \(String(describing: (error as? AppStoreGroupsError)?.code))" }
        }
        for _ in 0..<500 where observerA.events("cache miss").count == missesBefore {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(200))
        gated.open()
        #expect(await leader.value == .transactionIDNotFound)
        // Before the fix: "refused Optional(transaction-id-not-found)", from the request sent before the invalidation.
        let outcome = await late.value
        #expect(outcome == "served live")
    }
}
