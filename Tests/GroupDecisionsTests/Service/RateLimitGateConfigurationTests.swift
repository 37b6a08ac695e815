import AppStoreGroups
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import GroupDecisions

/// The gate's configuration: its defaults are the service's, the service stores it and makes its
/// gate with it, and a gate refuses what the service refuses, naming the field (the service under
/// `rateLimits.`).
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
        let health = SharedCacheHealth()
        #expect(health.retryInterval == .seconds(5))
        #expect(health.slowCallThreshold == .milliseconds(150))
        #expect(health.slowCallsInARow == 5)
        #expect(configuration.rate(for: .production) == 50)
        #expect(configuration.burst(for: .sandbox) == 5)
        #expect(configuration.problem == nil)
        #expect(GroupDecisionService.Configuration().rateLimits == configuration)
    }

    @Test("the service's gate is made with the gate's configuration stored in the service's")
    func storedInTheService() throws {
        var configuration = GroupDecisionService.Configuration()
        configuration.rateLimits.requestsPerSecond = [.production: 40, .sandbox: 2]
        configuration.rateLimits.requestBurst = [.sandbox: 3]
        configuration.rateLimits.refreshReserve = 0.5
        configuration.rateLimits.fallbackShare = 0.25
        configuration.rateLimits.maximumRateLimitWait = .seconds(2)
        configuration.rateLimits.maximumRateLimitHold = .seconds(1800)
        configuration.rateLimits.rateLimitHoldWithoutRetryAfter = .seconds(30)
        configuration.sharedCache.health.retryInterval = .seconds(7)
        configuration.sharedCache.health.slowCallThreshold = .milliseconds(300)
        configuration.sharedCache.health.slowCallsInARow = 0
        let service = try ServiceHarness(
            source: StaticGroupsSource([:]),
            time: .system,
            configuration: configuration
        )
        .service
        let gate = service.rateLimitGate.configuration
        #expect(gate == configuration.rateLimits)
        #expect(gate.fallbackShare == 0.25)
        #expect(gate.rate(for: .sandbox) == 2)
        #expect(gate.burst(for: .sandbox) == 3)
        #expect(gate.burst(for: .production) == 40)
        #expect(gate != RateLimitGate.Configuration())
    }

    @Test(
        "a setting of the gate out of range is refused by the gate and the service, with one message",
        arguments: [
            ("maximumRateLimitWait -1", "maximumRateLimitWait must not be negative"),
            ("maximumRateLimitHold 0", "maximumRateLimitHold must be positive"),
            ("rateLimitHoldWithoutRetryAfter 0", "rateLimitHoldWithoutRetryAfter must be positive"),
            ("refreshReserve 1", "refreshReserve must be at least 0 and less than 1"),
            ("requestsPerSecond 0", "requestsPerSecond[Sandbox] must be a positive number"),
            ("requestBurst 0.5", "requestBurst[Sandbox] must be a number of at least 1"),
            ("fallbackShare 1.5", "fallbackShare must be at least 0 and at most 1"),
            (
                "maximumRateLimitHold 315360001",
                "maximumRateLimitHold must be at most 10 years (315360000 seconds), not 315360001 seconds"
            ),
        ]
    )
    func refused(setting: String, message: String) throws {
        let parts = setting.split(separator: " ")
        let value = try #require(Double(String(parts[1])))
        var service = GroupDecisionService.Configuration()
        switch parts[0] {
        case "maximumRateLimitWait": service.rateLimits.maximumRateLimitWait = .seconds(value)
        case "maximumRateLimitHold": service.rateLimits.maximumRateLimitHold = .seconds(value)
        case "rateLimitHoldWithoutRetryAfter": service.rateLimits.rateLimitHoldWithoutRetryAfter = .seconds(value)
        case "refreshReserve": service.rateLimits.refreshReserve = value
        case "requestsPerSecond": service.rateLimits.requestsPerSecond[.sandbox] = value
        case "requestBurst": service.rateLimits.requestBurst[.sandbox] = value
        default: service.rateLimits.fallbackShare = value
        }
        let byGate = #expect(throws: AppStoreGroupsError.self) {
            try RateLimitGate(configuration: service.rateLimits)
        }
        #expect(byGate?.code == .invalidConfiguration)
        #expect(byGate?.message == message)
        let byService = #expect(throws: AppStoreGroupsError.self) {
            try ServiceHarness(source: StaticGroupsSource([:]), time: .system, configuration: service).service
        }
        #expect(byService?.code == .invalidConfiguration)
        #expect(byService?.message == "rateLimits.\(message)")
    }

    @Test(
        "a shared cache's health setting out of range is refused by the gate and the service",
        arguments: [
            ("retryInterval", -1.0, "retryInterval must not be negative"),
            ("slowCallThreshold", 0, "slowCallThreshold must be positive"),
            ("slowCallsInARow", -1, "slowCallsInARow must not be negative"),
        ]
    )
    func healthRefused(setting: String, value: Double, message: String) throws {
        var service = GroupDecisionService.Configuration()
        switch setting {
        case "retryInterval": service.sharedCache.health.retryInterval = .seconds(value)
        case "slowCallThreshold": service.sharedCache.health.slowCallThreshold = .seconds(value)
        default: service.sharedCache.health.slowCallsInARow = Int(value)
        }
        let byGate = #expect(throws: AppStoreGroupsError.self) {
            try RateLimitGate(sharedCacheHealth: service.sharedCache.health)
        }
        #expect(byGate?.message == message)
        let byService = #expect(throws: AppStoreGroupsError.self) {
            try ServiceHarness(source: StaticGroupsSource([:]), time: .system, configuration: service).service
        }
        #expect(byService?.message == "sharedCache.health.\(message)")
    }
}
