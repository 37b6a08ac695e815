import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// A shared cache that answers, but slowly (each read takes 200 ms, under its timeout), while
/// another process holds the customer's lock: the wait for that holder is still the configured
/// fetch lock wait, not forty polls of the store's time.
@Suite("Decision service: waiting for a lock holder on a slow store")
struct SlowStoreLockWaitTests {
    /// An in-memory store whose reads of answers take 200 ms on the manual clock.
    static func slowStore(_ clock: ManualClock) -> ScriptedGroupsCache {
        let store = ScriptedGroupsCache(forwardsBudget: false, clock: clock)
        store.delay("answer", by: .milliseconds(200))
        return store
    }

    @Test("the holder is waited for two seconds by the clock, then the waiter fetches itself")
    func lockWaitIsMeasuredOnTheClock() async throws {
        let clock = ManualClock()
        let start = clock.date
        let stub = StubGroupsSource(clock: clock.now)
        let store = Self.slowStore(clock)
        #expect(
            try await store.acquireFetchLock(
                anyTransactionID: "c1",
                in: .sandbox,
                owner: "other process",
                timeToLive: .seconds(10)
            )
        )
        // Slow calls alone would make the service leave this cache alone after three: this test is
        // about the lock wait, so the slow-call rule is off.
        let service = try GroupDecisionServiceTests.service(stub, clock: clock, shared: store) {
            $0.sharedCache.health.slowCallsInARow = 0
        }
        #expect(try await service.decision(anyTransactionID: "c1", environment: .sandbox).source == .live)
        // The first read (200 ms), then polls of 50 + 200 ms until two seconds have passed.
        let sent = try #require(stub.requestTimes.first).timeIntervalSince(start)
        #expect(abs(sent - 2.2) < 0.001)
        #expect(clock.sleeps == Array(repeating: .milliseconds(50), count: 8))
    }
}
