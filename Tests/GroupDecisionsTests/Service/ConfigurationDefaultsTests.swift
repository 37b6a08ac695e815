import GroupPolicy
import Testing

@testable import GroupDecisions

/// Every default of the service's configuration, field by field along its tree: nesting the
/// settings by concern moved every one of them, and none may have changed on the way.
@Suite("Configuration: every default pinned")
struct ConfigurationDefaultsTests {
    @Test("every nested field has the value it had before the configuration was nested")
    func everyDefault() {
        let configuration = GroupDecisionService.Configuration()

        let freshness = configuration.freshness
        #expect(freshness.timeToLive == .seconds(300))
        // Was `refreshAhead` 0.75 of the time to live.
        #expect(freshness.refreshAfter == .seconds(225))
        #expect(freshness.refreshSpread == .seconds(30))
        #expect(freshness.staleIfError == .zero)
        // Was `maximumAge` 3600 seconds since the fetch: 55 minutes past the time to live.
        #expect(freshness.maximumStaleness == .seconds(3300))
        #expect(freshness.lifetime(of: .groups) == .seconds(3600))
        #expect(freshness.negativeTimeToLive == .seconds(30))

        let rateLimits = configuration.rateLimits
        #expect(rateLimits.requestsPerSecond == [.production: 50, .sandbox: 5])
        #expect(rateLimits.requestBurst == [:])
        #expect(rateLimits.refreshReserve == 0.2)
        #expect(rateLimits.fallbackShare == 0)
        #expect(rateLimits.maximumRateLimitWait == .seconds(1))
        #expect(rateLimits.maximumRateLimitHold == .seconds(3600))
        #expect(rateLimits.rateLimitHoldWithoutRetryAfter == .seconds(60))

        let sharedCache = configuration.sharedCache
        #expect(sharedCache.health.retryInterval == .seconds(5))
        #expect(sharedCache.health.slowCallThreshold == .milliseconds(150))
        #expect(sharedCache.health.slowCallsInARow == 5)
        #expect(sharedCache.fetchLockTimeToLive == .seconds(10))
        #expect(sharedCache.fetchLockWait == .seconds(2))
        #expect(sharedCache.fetchLockPollInterval == .milliseconds(50))
        #expect(sharedCache.invalidationCheckInterval == .milliseconds(250))

        let localCache = configuration.localCache
        #expect(localCache.timeToLive == .seconds(5))
        #expect(localCache.capacityBytes == 64 << 20)
        #expect(localCache.sweepInterval == .seconds(60))
        #expect(!localCache.returnsFreedMemoryToSystem)

        #expect(configuration.maximumRefreshesInFlight == 4)
        #expect(GroupDecisionService.Configuration.longestDuration == .seconds(315_360_000))
        #expect(configuration.problem == nil)
    }
}
