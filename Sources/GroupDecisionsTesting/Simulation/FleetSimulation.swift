import AppStoreGroups
import Foundation
public import GroupDecisions
import GroupPolicy

/// A seeded simulation of a fleet: several `GroupDecisionService`s in one process over one shared
/// cache, a simulated App Store with Apple's budget, changes to customers' groups each followed by
/// the app's invalidation, faults, and a clock the simulation controls; after every step it checks
/// the four promises of the serving layer (see ``Promise``).
///
/// Run your own cache under it: the simulation finds a cache that breaks a promise the way the
/// service sees it, through decisions served.
///
/// ```swift
/// @Test func keepsTheFleetsPromises() async throws {
///     let simulation = FleetSimulation(services: 3, customers: 8, steps: 200) {
///         MyGroupsCache(address: server.address, keyPrefix: UUID().uuidString)   // empty each run
///     }
///     for seed in 1...100 {
///         let violations = try await simulation.run(seed: seed)
///         #expect(violations.isEmpty, "\(violations)")
///     }
/// }
/// ```
///
/// Each run makes an empty store, starts ``services`` services on it (each through a wrapper that
/// injects that service's faults), and plays ``steps`` steps drawn from the seed: concurrent
/// decisions, a change to a customer or a team at the App Store followed by the app's invalidation
/// through one service (by customer, by group or of everyone) with decisions racing it and
/// following it, the clock moving on, and faults (see ``Fault``). The same seed replays the same
/// steps; see the article "Simulating a fleet", section "Replay", for how far a run replays.
public struct FleetSimulation: Sendable {
    /// How many services share the store.
    public var services: Int
    /// How many customers the App Store knows of (or will: some purchase during the run).
    public var customers: Int
    /// How many steps a run plays.
    public var steps: Int
    /// Every service's configuration.
    ///
    /// Default ``defaultConfiguration``.
    public var configuration: GroupDecisionService.Configuration
    /// How the simulated App Store behaves.
    public var appStore: AppStore
    /// The faults the simulation may inject (those the store cannot suffer are left out).
    public var faults: Set<Fault>
    /// Where the services share their cache.
    public var store: Store
    /// Told each step and what came of each decision and invalidation, for the command's `--trace`.
    package var trace: (@Sendable (String) -> Void)?

    /// A simulation of a cache of your own.
    ///
    /// The cache is taken to keep time on the wall clock (``StoreClock/wall``) and to offer no
    /// faults of its own (no flush, no eviction, no restart); give a ``Store`` to
    /// ``init(services:customers:steps:configuration:appStore:faults:store:)`` for those.
    ///
    /// - Parameters:
    ///   - services: How many services share the cache, at least 1. Default 3.
    ///   - customers: How many customers, at least 2. Default 8.
    ///   - steps: How many steps a run plays, at least 1. Default 200.
    ///   - configuration: Every service's configuration. Default ``defaultConfiguration``.
    ///   - appStore: How the simulated App Store behaves. Default ``AppStore/init()``.
    ///   - faults: The faults the simulation may inject. Default ``Fault/all``.
    ///   - makeSharedCache: Returns an empty cache (a fresh key prefix is enough); called once per
    ///     run, and every service of the run shares what it returns.
    public init(
        services: Int = 3,
        customers: Int = 8,
        steps: Int = 200,
        configuration: GroupDecisionService.Configuration = FleetSimulation.defaultConfiguration,
        appStore: AppStore = AppStore(),
        faults: Set<Fault> = Fault.all,
        makeSharedCache: @escaping @Sendable () async throws -> any SharedGroupsCache
    ) {
        self.init(
            services: services,
            customers: customers,
            steps: steps,
            configuration: configuration,
            appStore: appStore,
            faults: faults,
            store: Store(clock: .wall) { _ in
                var instance = Store.Instance(caches: SharedCaches(try await makeSharedCache()))
                instance.fromOneStore = true
                return instance
            }
        )
    }

    /// A simulation of a store that says which clock it keeps and which faults it can suffer.
    ///
    /// - Parameters:
    ///   - services: How many services share the store, at least 1. Default 3.
    ///   - customers: How many customers, at least 2. Default 8.
    ///   - steps: How many steps a run plays, at least 1. Default 200.
    ///   - configuration: Every service's configuration. Default ``defaultConfiguration``.
    ///   - appStore: How the simulated App Store behaves. Default ``AppStore/init()``.
    ///   - faults: The faults the simulation may inject. Default ``Fault/all``.
    ///   - store: Where the services share their cache, such as ``Store/inMemory``.
    public init(
        services: Int = 3,
        customers: Int = 8,
        steps: Int = 200,
        configuration: GroupDecisionService.Configuration = FleetSimulation.defaultConfiguration,
        appStore: AppStore = AppStore(),
        faults: Set<Fault> = Fault.all,
        store: Store
    ) {
        self.services = services
        self.customers = customers
        self.steps = steps
        self.configuration = configuration
        self.appStore = appStore
        self.faults = faults
        self.store = store
    }

    /// The services' configuration unless another is given: every window short, so that a run of
    /// a few hundred steps lives through many of each.
    ///
    /// A time to live of 3 seconds, refreshed ahead from 1.5 seconds (plus up to half a second of
    /// spread), served stale up to 5 seconds past it (a hard cap of 8 seconds), stale-if-error 2
    /// seconds, not-found remembered 1 second; a budget of 4 requests a second in production and 2
    /// in the sandbox (bursts of one second's worth) with a 1-second wait; a shared cache left
    /// alone for 1 second after a failure, or after 3 calls in a row of 150 ms or more; a fetch
    /// lock of 3 seconds, polled every 100 ms for 1 second; invalidations checked every 250 ms;
    /// copies kept here 1.5 seconds; 2 refreshes ahead at once.
    public static var defaultConfiguration: GroupDecisionService.Configuration {
        var configuration = GroupDecisionService.Configuration()
        configuration.freshness = FreshnessPolicy(timeToLive: .seconds(3))
        configuration.freshness.refreshAfter = .milliseconds(1_500)
        configuration.freshness.refreshSpread = .milliseconds(500)
        configuration.freshness.maximumStaleness = .seconds(5)
        configuration.freshness.staleIfError = .seconds(2)
        configuration.freshness.negativeTimeToLive = .seconds(1)
        configuration.rateLimits.requestsPerSecond = [.production: 4, .sandbox: 2]
        configuration.rateLimits.maximumRateLimitWait = .seconds(1)
        configuration.rateLimits.maximumRateLimitHold = .seconds(30)
        configuration.rateLimits.rateLimitHoldWithoutRetryAfter = .seconds(2)
        configuration.sharedCache.health.retryInterval = .seconds(1)
        configuration.sharedCache.health.slowCallsInARow = 3
        configuration.sharedCache.fetchLockTimeToLive = .seconds(3)
        configuration.sharedCache.fetchLockWait = .seconds(1)
        configuration.sharedCache.fetchLockPollInterval = .milliseconds(100)
        configuration.localCache.timeToLive = .milliseconds(1_500)
        configuration.localCache.sweepInterval = .seconds(10)
        configuration.maximumRefreshesInFlight = 2
        return configuration
    }

    /// Plays one run and returns the promises it saw broken, at most one per promise and step (the
    /// first seen, with a count of the others).
    ///
    /// - Parameter seed: The run's seed, 0 to `UInt64.max`: the same seed plays the same steps.
    /// - Returns: The violations, in the order seen; empty when every promise held.
    /// - Throws: `AppStoreGroupsError.Code.invalidArgument` for a seed out of range or a parameter
    ///   out of range (naming it); what ``Store/make`` throws; `AppStoreGroupsError.Code.timeout`
    ///   when a step does not finish within a minute of real time (a service or store that hangs).
    public func run(seed: some BinaryInteger) async throws -> [Violation] {
        try await report(seed: seed).violations
    }

    /// Plays one run and returns its violations and what happened in it (decisions served and
    /// refused, requests to Apple, invalidations): ``run(seed:)`` with counts, for the command and
    /// the package's tests.
    package func report(seed: some BinaryInteger) async throws -> FleetRun.Report {
        guard let seed = UInt64(exactly: seed) else {
            throw AppStoreGroupsError(code: .invalidArgument, message: "the seed \(seed) is not 0 to \(UInt64.max)")
        }
        if let problem {
            throw AppStoreGroupsError(code: .invalidArgument, message: "invalid fleet simulation: \(problem)")
        }
        return try await FleetRun.play(self, seed: seed)
    }

    /// What is wrong with the parameters, or `nil`.
    var problem: String? {
        if services < 1 { return "services must be at least 1, not \(services)" }
        if services > 64 { return "services must be at most 64, not \(services)" }
        if customers < 2 { return "customers must be at least 2, not \(customers)" }
        if customers > 1_000 { return "customers must be at most 1000, not \(customers)" }
        if steps < 1 { return "steps must be at least 1, not \(steps)" }
        for (name, share) in [
            ("appStore.rateLimitedShare", appStore.rateLimitedShare), ("appStore.droppedShare", appStore.droppedShare),
            ("appStore.slowShare", appStore.slowShare),
        ] where !(share >= 0 && share <= 1) {
            return "\(name) must be 0 to 1, not \(share)"
        }
        for (environment, rate) in appStore.requestsPerSecond ?? [:] where !(rate > 0 && rate.isFinite) {
            return "appStore.requestsPerSecond[\(environment)] must be a positive number, not \(rate)"
        }
        return nil
    }
}
