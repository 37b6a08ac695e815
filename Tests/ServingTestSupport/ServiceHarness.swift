package import AppStoreGroups
package import GroupDecisions
package import GroupDecisionsTesting
package import GroupPolicy

/// A decision service under test and what it was built from: the one place a test makes a
/// service, as HummingbirdTesting's one harness makes an app.
///
/// ```swift
/// let harness = try ServiceHarness(source: StubGroupsSource()) { $0.freshness.timeToLive = .seconds(60) }
/// #expect(try await harness.decide("c1").source == .live)
/// harness.clock.advance(by: .seconds(61))
/// #expect(harness.observer.events("cache miss").count == 1)
/// ```
///
/// A second process of a fleet is ``another(sharedCache:observer:configuration:configure:)``: the
/// same source, clock and policy file.
package struct ServiceHarness<Source: GroupsSource>: Sendable {
    /// How the service tells time.
    package enum Time: Sendable {
        /// The manual clock, whose sleeps move it at once.
        case manual
        /// The manual clock's time and real sleeps, for `run()`'s sweeps: the clock stays the test's.
        case manualWithRealSleep
        /// The system clock and real sleeps, for real servers' timeouts.
        case system
        /// A time source of the test's own, such as a sleep that acts when it is reached.
        case custom(TimeSource)
    }

    /// The service.
    package let service: GroupDecisionService
    /// Where the service's groups come from.
    package let source: Source
    /// The clock the service reads, unless built with ``Time/system``.
    package let clock: ManualClock
    /// How the service tells time.
    package let time: Time
    /// What the service told its observer.
    package let observer: RecordingObserver
    /// The cache the service shares with the fleet, if any.
    package let sharedCache: (any SharedGroupsCache)?

    /// Builds a service over `source` with the family policy (or `policies`).
    ///
    /// - Parameters:
    ///   - source: Where the service's groups come from.
    ///   - sharedCache: The cache shared with the fleet, if any.
    ///   - clock: The manual clock. Default: a new one.
    ///   - time: How the service tells time. Default: by `clock`, its sleeps moving it.
    ///   - observer: What records the service's events.
    ///   - policies: The policies decisions are made with. Default: the family policy.
    ///   - decisionLog: Where decisions are recorded, if anywhere.
    ///   - candidatePolicies: A candidate evaluated beside `policies`, if any.
    ///   - configuration: The configuration before `configure`: the service's defaults unless
    ///     given, such as `.exactCounts(burst:)`.
    ///   - configure: Changes to `configuration`.
    /// - Throws: The policy's load error, or the service's for a configuration out of range.
    package init(
        source: Source,
        sharedCache: (any SharedGroupsCache)? = nil,
        clock: ManualClock = ManualClock(),
        time: Time = .manual,
        observer: RecordingObserver = RecordingObserver(),
        policies: PolicyStore? = nil,
        decisionLog: DecisionLog? = nil,
        candidatePolicies: PolicyStore? = nil,
        configuration: GroupDecisionService.Configuration = GroupDecisionService.Configuration(),
        configure: (inout GroupDecisionService.Configuration) -> Void = { _ in }
    ) throws {
        var configuration = configuration
        configure(&configuration)
        let timeSource: TimeSource
        switch time {
        case .manual: timeSource = clock.timeSource
        case .manualWithRealSleep: timeSource = TimeSource(now: clock.now, sleep: { try await Task.sleep(for: $0) })
        case .system: timeSource = .system
        case .custom(let custom): timeSource = custom
        }
        self.service = try GroupDecisionService(
            policies: policies ?? Families.policies(),
            source: source,
            sharedCaches: SharedCaches(testing: sharedCache),
            configuration: configuration,
            timeSource: timeSource,
            observer: observer,
            decisionLog: decisionLog,
            candidatePolicies: candidatePolicies
        )
        self.source = source
        self.clock = clock
        self.time = time
        self.observer = observer
        self.sharedCache = sharedCache
    }

    /// Another process of the fleet: a service over the same source, on the same clock, with the
    /// family policy loaded afresh and its own observer.
    package func another(
        sharedCache: (any SharedGroupsCache)?,
        observer: RecordingObserver = RecordingObserver(),
        configuration: GroupDecisionService.Configuration,
        configure: (inout GroupDecisionService.Configuration) -> Void = { _ in }
    ) throws -> ServiceHarness {
        try ServiceHarness(
            source: source,
            sharedCache: sharedCache,
            clock: clock,
            time: time,
            observer: observer,
            configuration: configuration,
            configure: configure
        )
    }

    /// The decision for `id`, in the sandbox unless told.
    package func decide(
        _ id: String,
        environment: StoreEnvironment = .sandbox
    ) async throws -> ServedDecision {
        try await service.decide(id, environment: environment)
    }
}

extension GroupDecisionService.Configuration {
    /// A sandbox budget of one token in 10,000 seconds with a burst of `burst`, no wait for a
    /// token, a shared cache never skipped as slow, no refresh ahead unless asked: no token comes
    /// back during a test, whatever the manual clock does, so every count is exact.
    package static func exactCounts(burst: Double = 5) -> Self {
        var configuration = Self()
        configuration.rateLimits.requestsPerSecond = [.sandbox: 0.0001, .production: 0.0001]
        configuration.rateLimits.requestBurst = [.sandbox: burst]
        configuration.rateLimits.maximumRateLimitWait = .zero
        configuration.sharedCache.health.slowCallsInARow = 0
        configuration.freshness.refreshAfter = nil
        return configuration
    }
}

extension GroupDecisionService {
    /// The decision for `id`, in the sandbox unless told.
    package func decide(_ id: String, environment: StoreEnvironment = .sandbox) async throws -> ServedDecision {
        try await decision(anyTransactionID: id, environment: environment)
    }

    /// The shadow report once every decision served so far has been compared.
    package func settledShadowReport() async -> ShadowReport {
        await waitForShadowComparisons()
        return shadowReport
    }
}
