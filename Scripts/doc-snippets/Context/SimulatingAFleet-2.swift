// swift-format-ignore-file
import AppStoreGroups
import Foundation
import GroupDecisions
import GroupDecisionsTesting

/// The article's store of answers and invalidations (the in-memory cache stands in for it).
typealias MyAnswerStore = InMemoryGroupsCache

/// The article's fleet budget, a store of that concern alone (over the in-memory cache's).
struct MyFleetBudget: SharedFleetBudget {
    let inner: InMemoryGroupsCache

    init(now: @escaping @Sendable () -> Date = { Date() }) {
        inner = InMemoryGroupsCache(now: now)
    }

    init(address: String, keyPrefix: String) {
        self.init()
    }

    func takeBudgetToken(from budget: FleetBudget, maximumWait: Duration) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        try await inner.takeBudgetToken(from: budget, maximumWait: maximumWait)
    }

    func takeBudgetToken(from budget: FleetBudget, keeping reserve: Double) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        try await inner.takeBudgetToken(from: budget, keeping: reserve)
    }
}
