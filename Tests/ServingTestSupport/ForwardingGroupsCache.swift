package import AppStoreGroups
package import Foundation
package import GroupDecisions
import GroupDecisionsRedis
import GroupDecisionsTesting
package import GroupPolicy

/// A shared cache that forwards the single calls (and the fleet budget) to another cache, an
/// in-memory one unless told, and records each call: a store written before the combined
/// fetch-lock calls, which gets their default implementations.
package final class ForwardingGroupsCache: SharedGroupsCache, @unchecked Sendable {
    package let inner: any SharedGroupsCache
    private let lock = NSLock()
    private var recorded: [String] = []
    private var failing: Set<String> = []

    /// Whether the invalidation count is forwarded too (recorded as `invalidationCount`); a store
    /// written before the count answers `nil` otherwise.
    private let countsInvalidations: Bool

    package init(_ inner: any SharedGroupsCache = InMemoryGroupsCache(), countsInvalidations: Bool = false) {
        self.inner = inner
        self.countsInvalidations = countsInvalidations
    }

    package func invalidationCount() async throws(AppStoreGroupsError) -> UInt64? {
        guard countsInvalidations else { return nil }
        try record("invalidationCount")
        return try await inner.invalidationCount()
    }

    /// The calls so far, by name.
    package var calls: [String] { lock.withLock { recorded } }

    /// Forgets the calls so far.
    package func clearCalls() {
        lock.withLock { recorded.removeAll() }
    }

    /// Makes the named calls fail with a store failure (after recording them).
    package func fail(_ names: Set<String>) {
        lock.withLock { failing = names }
    }

    private func record(_ name: String) throws(AppStoreGroupsError) {
        let fails = lock.withLock { () -> Bool in
            recorded.append(name)
            return failing.contains(name)
        }
        if fails { throw AppStoreGroupsError(code: .sharedCacheFailure, message: "\(name) failed") }
    }

    package func answer(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> CachedGroupsAnswer? {
        try record("answer")
        return try await inner.answer(anyTransactionID: customerID, in: environment)
    }

    package func setAnswer(
        _ answer: CachedGroupsAnswer,
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) {
        try record("setAnswer")
        try await inner.setAnswer(answer, anyTransactionID: customerID, in: environment, timeToLive: timeToLive)
    }

    package func invalidationGeneration(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> InvalidationGeneration {
        try record("invalidationGeneration")
        return try await inner.invalidationGeneration(anyTransactionID: customerID, in: environment)
    }

    package func setAnswer(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> Bool {
        try record("setAnswerIfGeneration")
        return try await inner.setAnswer(write)
    }

    package func acquireFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> Bool {
        try record("acquireFetchLock")
        return try await inner.acquireFetchLock(
            anyTransactionID: customerID,
            in: environment,
            owner: owner,
            timeToLive: timeToLive
        )
    }

    package func releaseFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String
    ) async throws(AppStoreGroupsError) {
        try record("releaseFetchLock")
        try await inner.releaseFetchLock(anyTransactionID: customerID, in: environment, owner: owner)
    }

    package func rateLimitedUntil(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> Date? {
        try record("rateLimitedUntil")
        return try await inner.rateLimitedUntil(endpoint, in: environment)
    }

    package func setRateLimitedUntil(
        _ instant: Date,
        for endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) {
        try record("setRateLimitedUntil")
        try await inner.setRateLimitedUntil(instant, for: endpoint, in: environment)
    }

    package var keepsFleetBudget: Bool { inner.keepsFleetBudget }

    package func takeBudgetToken(
        from budget: FleetBudget,
        maximumWait: Duration
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        try record("takeBudgetToken")
        return try await inner.takeBudgetToken(from: budget, maximumWait: maximumWait)
    }

    package func invalidate(anyTransactionID customerID: String) async throws(AppStoreGroupsError) {
        try record("invalidate")
        try await inner.invalidate(anyTransactionID: customerID)
    }

    package func invalidate(groupID: String) async throws(AppStoreGroupsError) {
        try record("invalidateGroup")
        try await inner.invalidate(groupID: groupID)
    }

    package func invalidateAll() async throws(AppStoreGroupsError) {
        try record("invalidateAll")
        try await inner.invalidateAll()
    }
}
