import AppStoreGroups
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import GroupDecisions

/// Every duration of the configuration is bounded, so none overflows the arithmetic done with it
/// later (the longest Int64 of seconds as a time to live crashed the first decision with Redis).
@Suite("Configuration: every duration bounded")
struct ConfigurationBoundsTests {
    nonisolated(unsafe) static let settings: [(String, WritableKeyPath<GroupDecisionService.Configuration, Duration>)] =
        [
            ("freshness.timeToLive", \.freshness.timeToLive),
            ("freshness.refreshSpread", \.freshness.refreshSpread),
            ("freshness.staleIfError", \.freshness.staleIfError),
            ("freshness.maximumStaleness", \.freshness.maximumStaleness),
            ("freshness.negativeTimeToLive", \.freshness.negativeTimeToLive),
            ("sharedCache.fetchLockTimeToLive", \.sharedCache.fetchLockTimeToLive),
            ("sharedCache.fetchLockWait", \.sharedCache.fetchLockWait),
            ("sharedCache.fetchLockPollInterval", \.sharedCache.fetchLockPollInterval),
            ("rateLimits.maximumRateLimitWait", \.rateLimits.maximumRateLimitWait),
            ("rateLimits.maximumRateLimitHold", \.rateLimits.maximumRateLimitHold),
            ("rateLimits.rateLimitHoldWithoutRetryAfter", \.rateLimits.rateLimitHoldWithoutRetryAfter),
            ("localCache.timeToLive", \.localCache.timeToLive),
            ("sharedCache.invalidationCheckInterval", \.sharedCache.invalidationCheckInterval),
            ("sharedCache.health.retryInterval", \.sharedCache.health.retryInterval),
            ("sharedCache.health.slowCallThreshold", \.sharedCache.health.slowCallThreshold),
            ("localCache.sweepInterval", \.localCache.sweepInterval),
        ]

    @Test("a duration past ten years is refused at configuration, naming it", arguments: 0..<16)
    func longDurationRefused(index: Int) throws {
        let (name, path) = Self.settings[index]
        var configuration = GroupDecisionService.Configuration()
        configuration[keyPath: path] = .seconds(Int64.max)
        let error = #expect(throws: AppStoreGroupsError.self) {
            try ServiceHarness(
                source: StaticGroupsSource([:]),
                sharedCache: InMemoryGroupsCache(),
                time: .system,
                configuration: configuration
            )
            .service
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(
            error?.message == "\(name) must be at most 10 years (315360000 seconds), not 9223372036854775807 seconds"
        )
    }

    @Test("ten years exactly is accepted")
    func tenYearsAccepted() {
        var configuration = GroupDecisionService.Configuration()
        configuration.freshness.timeToLive = GroupDecisionService.Configuration.longestDuration
        configuration.freshness.maximumStaleness = .zero
        #expect(configuration.problem == nil)
    }
}
