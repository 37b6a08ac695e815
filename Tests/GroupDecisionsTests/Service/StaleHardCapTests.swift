import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Synchronization
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// A source whose request takes `takes` on the manual clock (as a slow answer from Apple would) and
/// then answers 429.
private final class SlowTooManyRequestsSource: GroupsSource, Sendable {
    let inner: StaticGroupsSource
    let clock: ManualClock
    let slow = Mutex(false)
    let takes: Duration

    init(inner: StaticGroupsSource, clock: ManualClock, takes: Duration) {
        self.inner = inner
        self.clock = clock
        self.takes = takes
    }

    func customerGroups(
        anyTransactionID: String,
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> GetCustomerGroupsResponse {
        if slow.withLock({ $0 }) {
            clock.advance(by: takes)
            throw StaticGroupsSource.tooManyRequests(retryAfter: nil)
        }
        return try await inner.customerGroups(anyTransactionID: anyTransactionID, environment: environment)
    }
}

@Suite("Freshness: the hard cap on staleness holds when a stale answer is served")
struct StaleHardCapTests {
    /// The hard cap holds when the answer is served, not only when the fetch begins.
    ///
    /// Found by a review (fixed): `Fetcher.fetch` decides the stale answer is within the maximum age at the instant the
    /// fetch begins, and serves it on Apple's 429 without looking at the clock again: an answer whose
    /// refresh took 5 s is served stale 604 s after its fetch under a hard cap of 600 s (300 s time to
    /// live + 300 s maximum staleness).
    @Test("a 429 that comes back after the hard cap does not serve the old answer past the cap")
    func tooManyRequestsPastTheHardCap() async throws {
        let clock = ManualClock()
        let source = SlowTooManyRequestsSource(
            inner: StaticGroupsSource(Families.customers(1)),
            clock: clock,
            takes: .seconds(5)
        )
        let service = try ServiceHarness(source: source, clock: clock, configuration: .exactCounts(burst: 100)) {
            $0.freshness.maximumStaleness = .seconds(300)
        }
        .service
        #expect(try await service.decide("c0").source == .live)
        clock.advance(by: .seconds(599))
        source.slow.withLock { $0 = true }
        let served: ServedDecision?
        do {
            served = try await service.decide("c0")
        } catch {
            served = nil
            #expect((error as? AppStoreGroupsError)?.code == .rateLimitExceeded)
        }
        // Before the fix: served stale (budget) with age 604 s, past the 600 s hard cap.
        #expect(served == nil, "served \(String(describing: served?.source)) aged \(String(describing: served?.age))")
    }
}
