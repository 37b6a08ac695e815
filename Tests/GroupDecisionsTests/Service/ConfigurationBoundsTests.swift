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
            ("the time to live", \.timeToLive), ("the stale-if-error window", \.staleIfError),
            ("the maximum age", \.maximumAge), ("the negative time to live", \.negativeTimeToLive),
            ("the fetch lock's time to live", \.fetchLockTimeToLive), ("the fetch lock wait", \.fetchLockWait),
            ("the fetch lock poll interval", \.fetchLockPollInterval), ("the rate-limit wait", \.maximumRateLimitWait),
            ("the longest rate-limit hold", \.maximumRateLimitHold),
            ("the rate-limit hold without Retry-After", \.rateLimitHoldWithoutRetryAfter),
            ("the local time to live", \.localTimeToLive),
            ("the invalidation check interval", \.invalidationCheckInterval),
            ("the shared cache's retry interval", \.sharedCacheRetryInterval),
            ("the shared cache's slow-call threshold", \.sharedCacheSlowCallThreshold),
            ("the sweep interval", \.sweepInterval),
        ]

    @Test("a duration past ten years is refused at configuration, naming it", arguments: 0..<15)
    func longDurationRefused(index: Int) throws {
        let (name, path) = Self.settings[index]
        var configuration = GroupDecisionService.Configuration()
        configuration[keyPath: path] = .seconds(Int64.max)
        let error = #expect(throws: AppStoreGroupsError.self) {
            try GroupDecisionService(
                policies: ServiceFixtures.policies(),
                source: StaticGroupsSource([:]),
                sharedCache: InMemoryGroupsCache(),
                configuration: configuration
            )
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(
            error?.message == "\(name) must be at most 10 years (315360000 seconds), not 9223372036854775807 seconds"
        )
    }

    @Test("ten years exactly is accepted")
    func tenYearsAccepted() {
        var configuration = GroupDecisionService.Configuration()
        configuration.timeToLive = GroupDecisionService.Configuration.longestDuration
        configuration.maximumAge = GroupDecisionService.Configuration.longestDuration
        #expect(configuration.problem == nil)
    }
}
