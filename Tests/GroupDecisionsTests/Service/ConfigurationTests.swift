import AppStoreGroups
import GroupDecisionsTesting
import ServingTestSupport
import Testing

@testable import GroupDecisions

/// The service's configuration: every default field by field along its tree (nesting the settings by concern moved
/// every one, and none may have changed on the way), and every setting out of range refused with one line naming it by
/// its path, by the service and by the rate-limit gate for the gate's own settings.
@Suite("Configuration: every default, every refusal")
struct ConfigurationTests {
    typealias Configuration = GroupDecisionService.Configuration

    @Test("every nested field has the value it had before the configuration was nested")
    func everyDefault() {
        let configuration = Configuration()
        // The windows of a time to live of 300 s, each pinned by FreshnessPolicyTests: 225 s was
        // `refreshAhead` 0.75 of it, 3,300 s of staleness was `maximumAge` 3600 seconds since the fetch.
        #expect(configuration.freshness == FreshnessPolicy(timeToLive: .seconds(300)))
        let rateLimits = configuration.rateLimits
        #expect(rateLimits == RateLimitGate.Configuration())
        #expect(rateLimits.requestsPerSecond == [.production: 50, .sandbox: 5])
        #expect(rateLimits.requestBurst == [:])
        #expect(rateLimits.refreshReserve == 0.2)
        #expect(rateLimits.fallbackShare == 0)
        #expect(rateLimits.maximumRateLimitWait == .seconds(1))
        #expect(rateLimits.maximumRateLimitHold == .seconds(3600))
        #expect(rateLimits.rateLimitHoldWithoutRetryAfter == .seconds(60))
        #expect(rateLimits.rate(for: .production) == 50)
        #expect(rateLimits.burst(for: .sandbox) == 5)
        #expect(rateLimits.problem == nil)
        let sharedCache = configuration.sharedCache
        #expect(sharedCache.health == SharedCacheHealth())
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
        #expect(Configuration.longestDuration == .seconds(315_360_000))
        #expect(configuration.problem == nil)
    }

    @Test("the edges of every range are accepted: a fixed time to live, no reserve, ten years exactly")
    func edgesAccepted() {
        var configuration = Configuration()
        configuration.freshness.maximumStaleness = .zero
        configuration.freshness.refreshAfter = nil
        configuration.rateLimits.refreshReserve = 0
        #expect(configuration.problem == nil)
        configuration.freshness.timeToLive = Configuration.longestDuration
        #expect(configuration.problem == nil)
    }

    /// A setting changed from the defaults, and the one line the service refuses it with.
    struct Refusal: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var message: String
        var change: @Sendable (inout Configuration) -> Void

        init(_ message: String, _ change: @escaping @Sendable (inout Configuration) -> Void) {
            self.testDescription = message
            self.message = message
            self.change = change
        }
    }

    static let refusals: [Refusal] = [
        Refusal("freshness.timeToLive must be positive") { $0.freshness.timeToLive = .zero },
        Refusal("freshness.staleIfError must not be negative") { $0.freshness.staleIfError = .seconds(-1) },
        Refusal("freshness.maximumStaleness must not be negative") { $0.freshness.maximumStaleness = .seconds(-1) },
        Refusal("freshness.refreshSpread must not be negative") { $0.freshness.refreshSpread = .seconds(-1) },
        Refusal("freshness.refreshAfter must be positive and less than freshness.timeToLive, or nil") {
            $0.freshness.refreshAfter = .zero
        },
        Refusal("freshness.refreshAfter must be positive and less than freshness.timeToLive, or nil") {
            $0.freshness.refreshAfter = .seconds(300)
        },
        Refusal("freshness.timeToLive plus freshness.maximumStaleness must be at most 10 years") {
            $0.freshness.maximumStaleness = .seconds(1)
            $0.freshness.timeToLive = Configuration.longestDuration
        },
        Refusal("sharedCache.fetchLockTimeToLive must be positive") { $0.sharedCache.fetchLockTimeToLive = .zero },
        Refusal("sharedCache.fetchLockWait must not be negative") { $0.sharedCache.fetchLockWait = .seconds(-1) },
        Refusal("sharedCache.fetchLockPollInterval must be positive") { $0.sharedCache.fetchLockPollInterval = .zero },
        Refusal("sharedCache.invalidationCheckInterval must be positive") {
            $0.sharedCache.invalidationCheckInterval = .zero
        },
        Refusal("sharedCache.invalidationCheckInterval must be at most localCache.timeToLive") {
            $0.sharedCache.invalidationCheckInterval = .seconds(6)
        },
        Refusal("localCache.timeToLive must not be negative") { $0.localCache.timeToLive = .seconds(-1) },
        Refusal("localCache.sweepInterval must be positive") { $0.localCache.sweepInterval = .zero },
        Refusal("maximumRefreshesInFlight must be at least 1") { $0.maximumRefreshesInFlight = 0 },
        Refusal("rateLimits.maximumRateLimitWait must not be negative") {
            $0.rateLimits.maximumRateLimitWait = .seconds(-1)
        },
        Refusal("rateLimits.maximumRateLimitHold must be positive") { $0.rateLimits.maximumRateLimitHold = .zero },
        Refusal("rateLimits.rateLimitHoldWithoutRetryAfter must be positive") {
            $0.rateLimits.rateLimitHoldWithoutRetryAfter = .zero
        },
        Refusal("rateLimits.refreshReserve must be at least 0 and less than 1") {
            $0.rateLimits.refreshReserve = -0.01
        },
        Refusal("rateLimits.refreshReserve must be at least 0 and less than 1") { $0.rateLimits.refreshReserve = 1 },
        Refusal("rateLimits.requestsPerSecond[Sandbox] must be a positive number") {
            $0.rateLimits.requestsPerSecond[.sandbox] = 0
        },
        Refusal("rateLimits.requestsPerSecond[Production] must be a positive number") {
            $0.rateLimits.requestsPerSecond[.production] = .infinity
        },
        Refusal("rateLimits.requestBurst[Sandbox] must be a number of at least 1") {
            $0.rateLimits.requestBurst[.sandbox] = 0.5
        },
        Refusal("rateLimits.fallbackShare must be at least 0 and at most 1") { $0.rateLimits.fallbackShare = 1.5 },
        Refusal("rateLimits.maximumRateLimitHold must be at most 10 years (315360000 seconds), not 315360001 seconds") {
            $0.rateLimits.maximumRateLimitHold = .seconds(315_360_001)
        },
        Refusal("sharedCache.health.retryInterval must not be negative") {
            $0.sharedCache.health.retryInterval = .seconds(-1)
        },
        Refusal("sharedCache.health.slowCallThreshold must be positive") {
            $0.sharedCache.health.slowCallThreshold = .zero
        },
        Refusal("sharedCache.health.slowCallsInARow must not be negative") {
            $0.sharedCache.health.slowCallsInARow = -1
        },
    ]

    @Test(
        "a setting out of range is refused by the service, and by the gate for its own, with one line",
        arguments: refusals
    )
    func refused(_ refusal: Refusal) throws {
        var configuration = Configuration()
        refusal.change(&configuration)
        #expect(configuration.problem == refusal.message)
        let byService = #expect(throws: AppStoreGroupsError.self) {
            try ServiceHarness(source: StaticGroupsSource([:]), time: .system, configuration: configuration)
        }
        #expect(byService?.code == .invalidConfiguration)
        #expect(byService?.message == refusal.message)
        if refusal.message.hasPrefix("rateLimits.") {
            let byGate = #expect(throws: AppStoreGroupsError.self) {
                try RateLimitGate(configuration: configuration.rateLimits)
            }
            #expect(byGate?.code == .invalidConfiguration)
            #expect(byGate?.message == String(refusal.message.dropFirst("rateLimits.".count)))
        } else if refusal.message.hasPrefix("sharedCache.health.") {
            let byGate = #expect(throws: AppStoreGroupsError.self) {
                try RateLimitGate(sharedCacheHealth: configuration.sharedCache.health)
            }
            #expect(byGate?.message == String(refusal.message.dropFirst("sharedCache.health.".count)))
        }
    }

    nonisolated(unsafe) static let durations: [(String, WritableKeyPath<Configuration, Duration>)] = [
        ("freshness.timeToLive", \.freshness.timeToLive), ("freshness.refreshSpread", \.freshness.refreshSpread),
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

    /// Every duration is bounded, so none overflows the arithmetic done with it later (the longest
    /// Int64 of seconds as a time to live crashed the first decision with Redis).
    @Test("a duration past ten years is refused, naming it", arguments: 0..<16)
    func longDurationRefused(index: Int) throws {
        let (name, path) = Self.durations[index]
        var configuration = Configuration()
        configuration[keyPath: path] = .seconds(Int64.max)
        let error = #expect(throws: AppStoreGroupsError.self) {
            try ServiceHarness(
                source: StaticGroupsSource([:]),
                sharedCache: InMemoryGroupsCache(),
                time: .system,
                configuration: configuration
            )
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(
            error?.message == "\(name) must be at most 10 years (315360000 seconds), not 9223372036854775807 seconds"
        )
    }

    @Test("the service's gate is made with the gate's configuration stored in the service's")
    func storedInTheService() throws {
        var configuration = Configuration()
        configuration.rateLimits.requestsPerSecond = [.production: 40, .sandbox: 2]
        configuration.rateLimits.requestBurst = [.sandbox: 3]
        configuration.rateLimits.refreshReserve = 0.5
        configuration.rateLimits.fallbackShare = 0.25
        configuration.rateLimits.maximumRateLimitWait = .seconds(2)
        configuration.rateLimits.maximumRateLimitHold = .seconds(1800)
        configuration.rateLimits.rateLimitHoldWithoutRetryAfter = .seconds(30)
        configuration.sharedCache.health.retryInterval = .seconds(7)
        let service = try ServiceHarness(source: StaticGroupsSource([:]), time: .system, configuration: configuration)
            .service
        #expect(service.rateLimitGate.configuration == configuration.rateLimits)
    }
}
