import AppStoreGroups
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import GroupDecisions

/// The gate's configuration: its defaults are the service's, the service's configuration derives
/// it field by field, and a gate refuses what the service refuses, with the same message.
@Suite("Rate-limit gate configuration")
struct RateLimitGateConfigurationTests {
    @Test("every default of the gate's configuration is the service's")
    func defaults() {
        let configuration = RateLimitGate.Configuration()
        #expect(configuration.requestsPerSecond == [.production: 50, .sandbox: 5])
        #expect(configuration.requestBurst == [:])
        #expect(configuration.refreshReserve == 0.2)
        #expect(configuration.fallbackShare == 0)
        #expect(configuration.maximumRateLimitWait == .seconds(1))
        #expect(configuration.maximumRateLimitHold == .seconds(3600))
        #expect(configuration.rateLimitHoldWithoutRetryAfter == .seconds(60))
        #expect(configuration.sharedCacheRetryInterval == .seconds(5))
        #expect(configuration.sharedCacheSlowCallThreshold == .milliseconds(150))
        #expect(configuration.sharedCacheSlowCallsInARow == 5)
        #expect(configuration.rate(for: .production) == 50)
        #expect(configuration.burst(for: .sandbox) == 5)
        #expect(configuration.problem == nil)
        #expect(GroupDecisionService.Configuration().rateLimitGate == configuration)
    }

    @Test("every setting of the gate changed on the service's configuration shows in the gate's")
    func derivedFromTheService() {
        var service = GroupDecisionService.Configuration()
        service.requestsPerSecond = [.production: 40, .sandbox: 2]
        service.requestBurst = [.sandbox: 3]
        service.refreshReserve = 0.5
        service.fallbackShare = 0.25
        service.maximumRateLimitWait = .seconds(2)
        service.maximumRateLimitHold = .seconds(1800)
        service.rateLimitHoldWithoutRetryAfter = .seconds(30)
        service.sharedCacheRetryInterval = .seconds(7)
        service.sharedCacheSlowCallThreshold = .milliseconds(300)
        service.sharedCacheSlowCallsInARow = 0
        var expected = RateLimitGate.Configuration()
        expected.requestsPerSecond = [.production: 40, .sandbox: 2]
        expected.requestBurst = [.sandbox: 3]
        expected.refreshReserve = 0.5
        expected.fallbackShare = 0.25
        expected.maximumRateLimitWait = .seconds(2)
        expected.maximumRateLimitHold = .seconds(1800)
        expected.rateLimitHoldWithoutRetryAfter = .seconds(30)
        expected.sharedCacheRetryInterval = .seconds(7)
        expected.sharedCacheSlowCallThreshold = .milliseconds(300)
        expected.sharedCacheSlowCallsInARow = 0
        let derived = service.rateLimitGate
        #expect(derived == expected)
        #expect(derived.fallbackShare == 0.25)
        #expect(derived.rate(for: .sandbox) == 2)
        #expect(derived.burst(for: .sandbox) == 3)
        #expect(derived.burst(for: .production) == 40)
        #expect(derived != RateLimitGate.Configuration())
    }

    @Test(
        "a setting of the gate out of range is refused by the gate and the service, with one message",
        arguments: [
            ("maximumRateLimitWait -1", "the rate-limit wait must not be negative"),
            ("maximumRateLimitHold 0", "the longest rate-limit hold must be positive"),
            ("rateLimitHoldWithoutRetryAfter 0", "the rate-limit hold without Retry-After must be positive"),
            ("sharedCacheRetryInterval -1", "the shared cache's retry interval must not be negative"),
            ("sharedCacheSlowCallThreshold 0", "the shared cache's slow-call threshold must be positive"),
            ("sharedCacheSlowCallsInARow -1", "the shared cache's slow calls in a row must not be negative"),
            ("refreshReserve 1", "the refresh reserve must be at least 0 and less than 1"),
            ("requestsPerSecond 0", "the Sandbox request rate must be a positive number"),
            ("requestBurst 0.5", "the Sandbox request burst must be a number of at least 1"),
            ("fallbackShare 1.5", "the fallback share must be at least 0 and at most 1"),
            (
                "maximumRateLimitHold 315360001",
                "the longest rate-limit hold must be at most 10 years (315360000 seconds), not 315360001 seconds"
            ),
        ]
    )
    func refused(setting: String, message: String) throws {
        let parts = setting.split(separator: " ")
        let value = try #require(Double(String(parts[1])))
        var service = GroupDecisionService.Configuration()
        switch parts[0] {
        case "maximumRateLimitWait": service.maximumRateLimitWait = .seconds(value)
        case "maximumRateLimitHold": service.maximumRateLimitHold = .seconds(value)
        case "rateLimitHoldWithoutRetryAfter": service.rateLimitHoldWithoutRetryAfter = .seconds(value)
        case "sharedCacheRetryInterval": service.sharedCacheRetryInterval = .seconds(value)
        case "sharedCacheSlowCallThreshold": service.sharedCacheSlowCallThreshold = .seconds(value)
        case "sharedCacheSlowCallsInARow": service.sharedCacheSlowCallsInARow = Int(value)
        case "refreshReserve": service.refreshReserve = value
        case "requestsPerSecond": service.requestsPerSecond[.sandbox] = value
        case "requestBurst": service.requestBurst[.sandbox] = value
        default: service.fallbackShare = value
        }
        let byGate = #expect(throws: AppStoreGroupsError.self) {
            try RateLimitGate(configuration: service.rateLimitGate)
        }
        #expect(byGate?.code == .invalidConfiguration)
        #expect(byGate?.message == message)
        let byService = #expect(throws: AppStoreGroupsError.self) {
            try GroupDecisionService(
                policies: ServiceFixtures.policies(),
                source: StaticGroupsSource([:]),
                configuration: service
            )
        }
        #expect(byService?.code == .invalidConfiguration)
        #expect(byService?.message == message)
    }
}
