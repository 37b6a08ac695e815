public import AppStoreGroups
import Foundation
public import GroupPolicy

/// Decisions for an app server: a customer's transaction id, verified entitlements and
/// environment in, their Decision out, through a cache, a `PolicyStore` and a ``GroupsSource``.
///
/// Hold one per process and call ``decision(anyTransactionID:entitlements:environment:)`` per
/// request. It caches Apple's answers (not decisions, so a policy reload applies at once) here and
/// optionally in a ``SharedGroupsCache`` shared by a fleet, shares one request per customer among
/// concurrent callers, serves by one ``FreshnessPolicy`` (refreshing ahead, serving stale only
/// within its windows, otherwise failing closed: nothing is ever granted from a failed fetch), and
/// sends every request through ``rateLimitGate``. The article "Serving decisions at fleet scale"
/// describes each, and what the service does while the shared cache fails.
///
/// It writes nothing anywhere: what it does reaches the `observer` given to it (see
/// ``GroupDecisionObserver``). ``run()`` does its background work (refreshes ahead, sweeping); the
/// service works without it, refreshing nothing ahead.
///
/// The client's own retries still apply to each fetch; give it a `RetryPolicy` whose
/// `RetryPolicy.maximumRateLimitWait` is zero so that a 429 reaches the service (and the fleet)
/// at once rather than after the client's own wait.
public final class GroupDecisionService: Sendable {
    /// The policies decisions are made with.
    public let policies: PolicyStore
    /// How fresh answers must be, how long callers wait, how fast requests may go.
    public let configuration: Configuration
    /// The budgets and the 429 gate every request to Apple goes through; send other requests to
    /// Apple's groups endpoints (Get Group Members) through it too.
    public let rateLimitGate: RateLimitGate

    let context: ServingContext
    let flights: SingleFlight<FlightOutcome>
    let copies: LocalCopies
    let sharedFlight: SharedFlight
    /// Hashes the customer of each decision's record; the record reaches the log through the observer.
    private let decisionLog: DecisionLog?
    let shadow: PolicyShadow
    private let reloadHandler: PolicyStore.ReloadHandlerID
    /// The customers due a refresh ahead, for the workers ``run()`` runs.
    let refreshes: RefreshQueue

    var local: LocalGroupsCache { context.local }
    var timeSource: TimeSource { context.timeSource }
    var observer: any GroupDecisionObserver { context.observer }

    /// Creates a service.
    ///
    /// - Parameters:
    ///   - policies: The policies decisions are made with.
    ///   - source: Where customers' groups come from: App Store clients in production (see
    ///     ``init(policies:clients:sharedCaches:configuration:timeSource:observer:decisionLog:candidatePolicies:)``), a
    ///     `StaticGroupsSource` in tests.
    ///   - sharedCaches: The concerns of the caches shared by the fleet the service uses, each on
    ///     its own (see ``SharedCaches``); none for this process alone.
    ///   - configuration: Freshness, waits and budgets. Default: ``Configuration/init()``.
    ///   - timeSource: The wall clock and sleep. Default `TimeSource.system`.
    ///   - observer: Told what the service does, policy reloads included. Default: none.
    ///   - decisionLog: Receives one record per decision served or refused. Default: none.
    ///   - candidatePolicies: A candidate evaluated beside `policies` for every decision served,
    ///     without changing it (see ``shadowReport``). Default: none.
    /// - Throws: `AppStoreGroupsError.Code.invalidConfiguration` for a configuration out of range.
    public init(
        policies: PolicyStore,
        source: some GroupsSource,
        sharedCaches: SharedCaches,
        configuration: Configuration = Configuration(),
        timeSource: TimeSource = .system,
        observer: (any GroupDecisionObserver)? = nil,
        decisionLog: DecisionLog? = nil,
        candidatePolicies: PolicyStore? = nil
    ) throws(AppStoreGroupsError) {
        let context = try ServingContext(
            configuration: configuration,
            sharedCaches: sharedCaches,
            timeSource: timeSource,
            observer: DecisionLogObserver.observer(observer, log: decisionLog)
        )
        let rateLimitGate = RateLimitGate(
            configuration: configuration.rateLimits,
            shared: context.shared,
            timeSource: timeSource,
            observer: context.observer
        )
        let refreshes = RefreshQueue(capacity: GroupDecisionService.maximumQueuedRefreshes)
        let keeper = AnswerKeeper(context: context)
        let fetcher = Fetcher(context: context, source: source, rateLimitGate: rateLimitGate, keeper: keeper)
        let sharedFlight = SharedFlight(context: context, fetcher: fetcher, keeper: keeper)
        self.context = context
        self.policies = policies
        self.configuration = configuration
        self.rateLimitGate = rateLimitGate
        self.refreshes = refreshes
        self.flights = SingleFlight(now: timeSource.now)
        self.decisionLog = decisionLog
        self.shadow = PolicyShadow(live: policies, candidate: candidatePolicies, timeSource: timeSource)
        self.sharedFlight = sharedFlight
        self.copies = LocalCopies(context: context, sharedFlight: sharedFlight, refreshes: refreshes)
        self.reloadHandler = policies.addReloadHandler(Self.reportingReloads(to: context.observer))
    }

    /// Creates a service over one store that keeps every concern of a shared cache, or none.
    ///
    /// - Parameters:
    ///   - policies: The policies decisions are made with.
    ///   - source: Where customers' groups come from.
    ///   - sharedCache: A cache shared by the fleet, or `nil` for this process alone.
    ///   - configuration: Freshness, waits and budgets. Default: ``Configuration/init()``.
    ///   - timeSource: The wall clock and sleep. Default `TimeSource.system`.
    ///   - observer: Told what the service does. Default: none.
    ///   - decisionLog: Receives one record per decision. Default: none.
    ///   - candidatePolicies: A candidate evaluated beside `policies`. Default: none.
    /// - Throws: `AppStoreGroupsError.Code.invalidConfiguration` for a configuration out of range.
    public convenience init(
        policies: PolicyStore,
        source: some GroupsSource,
        sharedCache: (any SharedGroupsCache)? = nil,
        configuration: Configuration = Configuration(),
        timeSource: TimeSource = .system,
        observer: (any GroupDecisionObserver)? = nil,
        decisionLog: DecisionLog? = nil,
        candidatePolicies: PolicyStore? = nil
    ) throws(AppStoreGroupsError) {
        try self.init(
            policies: policies,
            source: source,
            sharedCaches: sharedCache.map { SharedCaches($0) } ?? SharedCaches(),
            configuration: configuration,
            timeSource: timeSource,
            observer: observer,
            decisionLog: decisionLog,
            candidatePolicies: candidatePolicies
        )
    }

    /// A reload handler that tells `observer` of each reload of the policies.
    private static func reportingReloads(
        to observer: any GroupDecisionObserver
    ) -> PolicyStore.ReloadHandler {
        { outcome, revision in
            switch outcome {
            case .reloaded(let generation):
                observer.policyReloaded(GroupDecisionEvent.PolicyReload(revision: revision, generation: generation))
            case .failed(let error):
                observer.policyReloadFailed(GroupDecisionEvent.PolicyReloadFailure(error: error, revision: revision))
            }
        }
    }

    /// Creates a service whose source is the App Store: one client per environment served.
    ///
    /// - Parameters:
    ///   - policies: The policies decisions are made with.
    ///   - clients: One client per environment served (by `storeEnvironment`); a call for an
    ///     environment without one fails with `AppStoreGroupsError.Code.invalidArgument`.
    ///   - sharedCaches: The concerns of the caches shared by the fleet (see ``SharedCaches``).
    ///     Default: none, this process alone.
    ///   - configuration: Freshness, waits and budgets. Default: ``Configuration/init()``.
    ///   - timeSource: The wall clock and sleep. Default `TimeSource.system`.
    ///   - observer: Told what the service does, policy reloads included. Default: none.
    ///   - decisionLog: Receives one record per decision served or refused. Default: none.
    ///   - candidatePolicies: A candidate evaluated beside `policies` for every decision served,
    ///     without changing it (see ``shadowReport``). Default: none.
    /// - Throws: `AppStoreGroupsError.Code.invalidConfiguration` for a configuration out of range
    ///   or two clients for one environment.
    public convenience init(
        policies: PolicyStore,
        clients: [AppStoreGroupsClient],
        sharedCaches: SharedCaches = SharedCaches(),
        configuration: Configuration = Configuration(),
        timeSource: TimeSource = .system,
        observer: (any GroupDecisionObserver)? = nil,
        decisionLog: DecisionLog? = nil,
        candidatePolicies: PolicyStore? = nil
    ) throws(AppStoreGroupsError) {
        try self.init(
            policies: policies,
            source: try AppStoreClientsSource(clients),
            sharedCaches: sharedCaches,
            configuration: configuration,
            timeSource: timeSource,
            observer: observer,
            decisionLog: decisionLog,
            candidatePolicies: candidatePolicies
        )
    }

    deinit {
        policies.removeReloadHandler(reloadHandler)
    }

    /// What this process's cache holds, in bytes, as its bound counts them.
    public var cachedBytes: Int { local.costBytes }

    // MARK: Decisions

    /// The decision made from the customer's groups under the policy serving now: compared with
    /// the candidate policy, if any, and told to the observer as a record when a decision log
    /// hashes its customer.
    func serve(
        _ loaded: LoadedGroups,
        anyTransactionID: String,
        entitlements: Set<String>,
        environment: StoreEnvironment
    ) -> ServedDecision {
        let context = EvaluationContext(environment: environment, entitlements: entitlements)
        let policy = policies.current
        let served = ServedDecision(
            decision: policy.evaluate(loaded.decoded, in: context),
            source: loaded.source,
            fetchedAt: loaded.answer.fetchedAt,
            groups: loaded.decoded,
            policy: policy,
            staleReason: loaded.staleReason,
            age: loaded.staleAge
        )
        let customerHash = decisionLog?.customerHash(anyTransactionID)
        shadow.enqueue(
            ShadowJob(
                decision: served.decision,
                policy: policy,
                groups: loaded.decoded,
                context: context,
                decisionID: served.decisionID,
                customerHash: customerHash
            )
        )
        if let customerHash {
            observer.decisionRecorded(
                DecisionLogRecord(
                    time: timeSource.now(),
                    decisionID: served.decisionID,
                    customerHash: customerHash,
                    environment: environment.rawValue,
                    policyRevision: policy.revision,
                    source: served.source.name,
                    fetchedAt: served.fetchedAt,
                    capabilities: served.decision.capabilities.sorted(),
                    staleReason: served.staleReason?.name,
                    age: served.age
                )
            )
        }
        return served
    }

    /// Tells the observer of a decision refused with `error`, when a decision log hashes its customer.
    func recordRefusal(_ anyTransactionID: String, in environment: StoreEnvironment, error: AppStoreGroupsError) {
        guard let decisionLog else { return }
        observer.decisionRecorded(
            DecisionLogRecord(
                time: timeSource.now(),
                customerHash: decisionLog.customerHash(anyTransactionID),
                environment: environment.rawValue,
                policyRevision: policies.revision,
                errorCode: error.code.description
            )
        )
    }
}
