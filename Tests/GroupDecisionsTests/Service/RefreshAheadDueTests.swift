import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Synchronization
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// A static source whose calls for one id wait at a gate while `holding` is set.
private final class HeldForOneSource: GroupsSource, Sendable {
    let inner: StaticGroupsSource
    let heldID: String
    let holding = Mutex(false)
    let gate = Gate()

    init(_ inner: StaticGroupsSource, holding heldID: String) {
        self.inner = inner
        self.heldID = heldID
    }

    func customerGroups(
        anyTransactionID: String,
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> GetCustomerGroupsResponse {
        let answer = try await inner.customerGroups(anyTransactionID: anyTransactionID, environment: environment)
        if anyTransactionID == heldID, holding.withLock({ $0 }) { await gate.wait() }
        return answer
    }
}

@Suite("Refresh ahead: a queued refresh of an answer no longer due sends nothing")
struct RefreshAheadDueTests {
    /// A refresh no longer due sends nothing.
    ///
    /// Found by a review (fixed): without a shared cache `SharedFlight.refresh` fetches whenever this process holds an
    /// answer of groups for the customer, never asking whether it is still due: a refresh queued for
    /// c0's old answer, run after an invalidation and a caller's new fetch, asks Apple again for an
    /// answer 0 s old (the shared-cache path checks `refreshIsDue`). Observed: 3 requests for c0, not 2.
    @Test("a queued refresh whose answer was replaced by a new fetch asks Apple nothing")
    func queuedRefreshOfReplacedAnswerSendsNothing() async throws {
        let clock = ManualClock()
        let inner = StaticGroupsSource(Families.customers(2))
        let source = HeldForOneSource(inner, holding: "c1")
        let service = try ServiceHarness(
            source: source,
            clock: clock,
            time: .manualWithRealSleep,
            configuration: .exactCounts(burst: 100)
        ) {
            $0.freshness.refreshAfter = .seconds(225)
            $0.freshness.refreshSpread = .zero
            $0.maximumRefreshesInFlight = 1
        }
        .service
        #expect(try await service.decide("c0").source == .live)
        #expect(try await service.decide("c1").source == .live)
        let background = Task { try await service.run() }
        defer { background.cancel() }
        try await waitUntil { service.refreshes.workerCount >= 1 }
        clock.advance(by: .seconds(250))

        // The one worker is busy refreshing c1, held at Apple.
        source.holding.withLock { $0 = true }
        #expect(try await service.decide("c1").source == .cache)
        try await waitUntil { inner.callCount(for: "c1") >= 2 }
        #expect(inner.callCount(for: "c1") == 2)

        // c0 is due too: its refresh waits in the queue.
        #expect(try await service.decide("c0").source == .cache)
        // Invalidated, then fetched anew by a caller: the answer kept is 0 s old.
        try await service.invalidate(anyTransactionID: "c0")
        #expect(try await service.decide("c0").source == .live)
        #expect(inner.callCount(for: "c0") == 2)

        source.gate.open()
        try await waitUntil { service.refreshes.count == 0 }
        #expect(service.refreshes.count == 0)
        // Before the fix: 3, the queued refresh fetched the 0-second-old answer again.
        #expect(inner.callCount(for: "c0") == 2)
    }
}
