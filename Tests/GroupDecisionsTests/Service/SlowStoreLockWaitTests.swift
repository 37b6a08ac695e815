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
    final class SlowStore: SharedGroupsCache, @unchecked Sendable {
        let inner: InMemoryGroupsCache
        let clock: ManualClock

        init(clock: ManualClock) {
            self.clock = clock
            inner = InMemoryGroupsCache(now: clock.now)
        }

        func answer(
            anyTransactionID customerID: String,
            in environment: StoreEnvironment
        ) async throws(AppStoreGroupsError) -> CachedGroupsAnswer? {
            clock.advance(by: .milliseconds(200))
            return try await inner.answer(anyTransactionID: customerID, in: environment)
        }

        func setAnswer(
            _ answer: CachedGroupsAnswer,
            anyTransactionID customerID: String,
            in environment: StoreEnvironment,
            timeToLive: Duration
        ) async throws(AppStoreGroupsError) {
            try await inner.setAnswer(answer, anyTransactionID: customerID, in: environment, timeToLive: timeToLive)
        }

        func invalidationGeneration(
            anyTransactionID customerID: String,
            in environment: StoreEnvironment
        ) async throws(AppStoreGroupsError) -> InvalidationGeneration {
            try await inner.invalidationGeneration(anyTransactionID: customerID, in: environment)
        }

        func setAnswer(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> Bool {
            try await inner.setAnswer(write)
        }

        func acquireFetchLock(
            anyTransactionID customerID: String,
            in environment: StoreEnvironment,
            owner: String,
            timeToLive: Duration
        ) async throws(AppStoreGroupsError) -> Bool {
            try await inner.acquireFetchLock(
                anyTransactionID: customerID,
                in: environment,
                owner: owner,
                timeToLive: timeToLive
            )
        }

        func releaseFetchLock(
            anyTransactionID customerID: String,
            in environment: StoreEnvironment,
            owner: String
        ) async throws(AppStoreGroupsError) {
            try await inner.releaseFetchLock(anyTransactionID: customerID, in: environment, owner: owner)
        }

        func rateLimitedUntil(
            _ endpoint: GroupsEndpoint,
            in environment: StoreEnvironment
        ) async throws(AppStoreGroupsError) -> Date? {
            try await inner.rateLimitedUntil(endpoint, in: environment)
        }

        func setRateLimitedUntil(
            _ instant: Date,
            for endpoint: GroupsEndpoint,
            in environment: StoreEnvironment
        ) async throws(AppStoreGroupsError) {
            try await inner.setRateLimitedUntil(instant, for: endpoint, in: environment)
        }

        func invalidate(anyTransactionID customerID: String) async throws(AppStoreGroupsError) {
            try await inner.invalidate(anyTransactionID: customerID)
        }

        func invalidate(groupID: String) async throws(AppStoreGroupsError) {
            try await inner.invalidate(groupID: groupID)
        }

        func invalidateAll() async throws(AppStoreGroupsError) {
            try await inner.invalidateAll()
        }
    }

    @Test("the holder is waited for two seconds by the clock, then the waiter fetches itself")
    func lockWaitIsMeasuredOnTheClock() async throws {
        let clock = ManualClock()
        let start = clock.date
        let stub = StubAppStore(clock: clock.now)
        let store = SlowStore(clock: clock)
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
            $0.sharedCacheSlowCallsInARow = 0
        }
        #expect(try await service.decision(anyTransactionID: "c1", environment: .sandbox).source == .live)
        // The first read (200 ms), then polls of 50 + 200 ms until two seconds have passed.
        let sent = try #require(stub.requestTimes.first).timeIntervalSince(start)
        #expect(abs(sent - 2.2) < 0.001)
        #expect(clock.sleeps == Array(repeating: .milliseconds(50), count: 8))
    }
}
