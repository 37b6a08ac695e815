package import GroupDecisions

extension FleetSimulation {
    /// The revocation storm's services: answers live 1 second, are never refreshed ahead, and may
    /// be served stale for an hour after their fetch; everything else as the service's defaults,
    /// with the simulation's budget (4 requests a second in production, 2 in the sandbox).
    package static var revocationStormConfiguration: GroupDecisionService.Configuration {
        var configuration = GroupDecisionService.Configuration()
        configuration.freshness = FreshnessPolicy(timeToLive: .seconds(1))
        configuration.freshness.refreshAfter = nil
        configuration.freshness.maximumStaleness = .seconds(3_599)
        configuration.rateLimits.requestsPerSecond = defaultConfiguration.rateLimits.requestsPerSecond
        configuration.rateLimits.maximumRateLimitWait = .seconds(1)
        return configuration
    }

    /// The revocation storm's App Store: a third of the requests answered 429 and one connection
    /// in ten dropped, at all times.
    package static var revocationStormAppStore: AppStore {
        var appStore = AppStore()
        appStore.rateLimitedShare = 1.0 / 3
        appStore.droppedShare = 0.1
        return appStore
    }
}
