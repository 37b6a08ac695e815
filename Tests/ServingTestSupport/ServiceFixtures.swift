import AppStoreGroups
import Foundation
package import GroupDecisions
package import GroupDecisionsTesting
package import GroupPolicy

/// What the serving suites of several test targets build services from: the family policy, its
/// customers, and a configuration whose budget never refills during a test.
package enum ServiceFixtures {
    /// The bundled family-sharing policy, loaded afresh.
    package static func policies() throws -> PolicyStore {
        try PolicyStore(contentsOf: TestFiles.packageRoot.appending(path: "Policies/family-sharing.json").path)
    }

    /// What the family policy grants a member of a CONSUMER group.
    package static let familyCapabilities = ["family.shared-lists", "family.space"]

    /// A customer in group g1.
    package static let family = GetCustomerGroupsResponse(groups: [GroupEntry(groupID: "g1", groupType: .consumer)])

    /// Customers `c0` to `c<count - 1>`, each in group g1.
    package static func customers(_ count: Int) -> [String: GetCustomerGroupsResponse] {
        Dictionary(uniqueKeysWithValues: (0..<count).map { ("c\($0)", family) })
    }

    /// A sandbox budget of one token in 10,000 seconds with a burst of `burst`, no wait for a
    /// token, a shared cache never skipped as slow, no refresh ahead unless asked: no token comes
    /// back during a test, whatever the manual clock does, so every count is exact.
    package static func configuration(
        burst: Double = 5,
        _ configure: (inout GroupDecisionService.Configuration) -> Void = { _ in }
    ) -> GroupDecisionService.Configuration {
        var configuration = GroupDecisionService.Configuration()
        configuration.rateLimits.requestsPerSecond = [.sandbox: 0.0001, .production: 0.0001]
        configuration.rateLimits.requestBurst = [.sandbox: burst]
        configuration.rateLimits.maximumRateLimitWait = .zero
        configuration.rateLimits.sharedCacheSlowCallsInARow = 0
        configuration.freshness.refreshAfter = nil
        configure(&configuration)
        return configuration
    }

    /// A service over `source` with the family policy on the manual clock.
    ///
    /// `run()` sleeps between sweeps: on the manual clock a sleep moves the clock, so with
    /// `realSleep` the service sleeps for real while the clock stays the test's.
    package static func service(
        _ source: some GroupsSource,
        clock: ManualClock,
        shared: (any SharedGroupsCache)? = nil,
        observer: (any GroupDecisionObserver)? = nil,
        configuration: GroupDecisionService.Configuration,
        realSleep: Bool = false
    ) throws -> GroupDecisionService {
        let timeSource =
            realSleep ? TimeSource(now: clock.now, sleep: { try await Task.sleep(for: $0) }) : clock.timeSource
        return try GroupDecisionService(
            policies: policies(),
            source: source,
            sharedCache: shared,
            configuration: configuration,
            timeSource: timeSource,
            observer: observer
        )
    }

    /// A sandbox decision for `id`.
    package static func decide(_ service: GroupDecisionService, _ id: String) async throws -> ServedDecision {
        try await service.decision(anyTransactionID: id, environment: .sandbox)
    }
}

extension GroupDecisionService {
    /// The shadow report once every decision served so far has been compared.
    package func settledShadowReport() async -> ShadowReport {
        await waitForShadowComparisons()
        return shadowReport
    }
}
