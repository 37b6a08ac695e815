import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

@Suite("Decision service: a joined flight's not-found answer is judged against another process's invalidation")
struct LateJoinerNotFoundTests {
    /// A joined flight's not-found is judged by when the flight began.
    ///
    /// Found by a review (fixed): `SingleFlight.runReportingPermit` hands a flight's error to every caller who joined it,
    /// and `GroupDecisionService.missed` applies the permit's
    /// `answers(callerBegunAt:countCheckInterval:)` only to answers: a caller who begins after
    /// another process's invalidation (the purchase's notification) returned joins a flight whose
    /// request went to Apple before it, and is refused with its `transactionIDNotFound`. Observed:
    /// the late caller is refused with transactionIDNotFound instead of being served the new groups.
    @Test("a caller who begins after another process's invalidation returned is not refused with an older not-found")
    func joinerAfterRemoteInvalidationGetsNoOldNotFound() async throws {
        let fleet = try TwoProcessFleet(customers: [:])
        let (clock, inner, gated, processA, processB) = (
            fleet.clock, fleet.inner, fleet.gated, fleet.processA, fleet.processB
        )
        // Apple does not know c0 yet when process A's request reaches it; the answer is held.
        gated.close()
        let leader = Task { () -> AppStoreGroupsError.Code? in
            do {
                _ = try await processA.decide("c0")
                return nil
            } catch { return (error as? AppStoreGroupsError)?.code }
        }
        try await gated.waitForCalls(1)
        #expect(gated.startedCalls == 1)

        // The purchase completes; its notification invalidates c0 through process B.
        inner.setAnswer(Families.member, for: "c0")
        try await processB.invalidate(anyTransactionID: "c0")
        clock.advance(by: .seconds(1))

        // A request that begins after the invalidation returned: it joins A's flight, begun before.
        let late = try await fleet.lateCallerOfA { () -> String in
            do {
                return "served \(try await processA.decide("c0").source)"
            } catch { return "refused \(String(describing: (error as? AppStoreGroupsError)?.code))" }
        }
        gated.open()
        #expect(await leader.value == .transactionIDNotFound)
        // Before the fix: "refused Optional(transaction-id-not-found)", from the request sent before the invalidation.
        let outcome = await late.value
        #expect(outcome == "served live")
    }
}
