public import AppStoreGroups
import Foundation
public import GroupPolicy

/// Decisions for an app server: a customer's transaction id, verified entitlements and
/// environment in, their Decision out, through a cache, a `PolicyStore` and a ``GroupsSource``.
///
/// Hold one per process and call ``decision(anyTransactionID:entitlements:environment:)`` per
/// request. Its work is split by job:
///
/// - **Caching**: Apple's answers (not decisions, so a policy reload applies at once) in a
///   byte-bounded, least-recently-used cache in this process, and optionally in a shared
///   ``SharedGroupsCache`` such as `RedisGroupsCache` for a fleet.
/// - **Single flight**: concurrent calls for one customer share one request to Apple; with a
///   shared cache, processes take a short lock and the others poll for the holder's answer.
/// - **Freshness**: answers are fresh for ``FreshnessPolicy/timeToLive``, and refreshed in the
///   background after ``FreshnessPolicy/refreshAfter`` (plus the answer's share of
///   ``FreshnessPolicy/refreshSpread``) while callers keep the cached answer.
///   Past it, an answer is fetched again; while the budget spares no token for that (refreshes
///   leave ``RateLimitGate/Configuration/refreshReserve`` to customers with no answer), or when the fetch fails
///   within ``FreshnessPolicy/staleIfError``, it is served marked stale, never more
///   than ``FreshnessPolicy/maximumStaleness`` past it; otherwise the call fails closed with the fetch's
///   `AppStoreGroupsError`. Nothing is ever granted from a failed fetch.
/// - **Negative answers**: `TransactionIdNotFoundError` is remembered for
///   ``FreshnessPolicy/negativeTimeToLive``, and thrown again from the cache.
/// - **Rate limits**: every request goes through ``rateLimitGate``: a budget per endpoint and
///   environment, and after a 429 nothing sent to that endpoint, by any process sharing the cache,
///   before the `Retry-After` instant (at most ``RateLimitGate/Configuration/maximumRateLimitHold`` away).
///
/// When the shared cache fails or is consistently slow, the service carries on with its own cache
/// and keeps failing closed where it would have; while the cache that keeps the fleet's budget
/// fails, it sends Apple nothing beyond what the cache granted (see
/// ``RateLimitGate/Configuration/fallbackShare``). It writes nothing anywhere: what it
/// does reaches the `observer` given to it (see ``GroupDecisionObserver``), policy reloads
/// included. ``run()`` does its background work (refreshes ahead, sweeping); the service works
/// without it, refreshing nothing ahead.
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

    let source: any GroupsSource
    let shared: SharedCacheGuard?
    let local: LocalGroupsCache
    /// With a shared cache: its invalidation count as this process read it, which decides whether
    /// a copy kept here may be served.
    let invalidations: InvalidationWatch?
    let flights: SingleFlight<Loaded>
    let timeSource: TimeSource
    let observer: any GroupDecisionObserver
    private let decisionLog: DecisionLog?
    let shadow: PolicyShadow
    private let reloadHandler: PolicyStore.ReloadHandlerID
    /// The windows of ``Configuration/freshness`` in seconds, converted once: a hit compares dates
    /// with them, and `Duration` arithmetic costs more than the rest of the check.
    let timeToLiveSeconds: Double
    let negativeTimeToLiveSeconds: Double
    /// The oldest an answer of groups is served (``FreshnessPolicy/lifetime(of:)``), and the earliest
    /// age a hit asks for a refresh ahead, before the answer's share of the spread (or infinity).
    let maximumAgeSeconds: Double
    let refreshAheadSeconds: Double
    /// The customers due a refresh ahead, for the workers ``run()`` runs.
    let refreshes = RefreshQueue(capacity: GroupDecisionService.maximumQueuedRefreshes)

    /// A customer's groups as a flight delivers them.
    struct Loaded: Sendable {
        var answer: CachedGroupsAnswer
        var decoded: GetCustomerGroupsResponse
        var source: ServedDecision.Source
        /// Why a stale answer is served, and how old it was then.
        var staleReason: ServedDecision.StaleReason? = nil
        var staleAge: Duration? = nil
        /// A refresh ahead that fetched nothing: not an answer for a caller who joined its flight,
        /// who starts one of their own.
        var refreshSkipped = false
    }

    /// Creates a service.
    ///
    /// - Parameters:
    ///   - policies: The policies decisions are made with.
    ///   - source: Where customers' groups come from: App Store clients in production (see
    ///     ``init(policies:clients:sharedCache:configuration:timeSource:observer:decisionLog:candidatePolicies:)``), a
    ///     `StaticGroupsSource` in tests.
    ///   - sharedCache: A cache shared by the fleet, or `nil` for this process alone.
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
        sharedCache: (any SharedGroupsCache)? = nil,
        configuration: Configuration = Configuration(),
        timeSource: TimeSource = .system,
        observer: (any GroupDecisionObserver)? = nil,
        decisionLog: DecisionLog? = nil,
        candidatePolicies: PolicyStore? = nil
    ) throws(AppStoreGroupsError) {
        if let problem = configuration.problem {
            throw AppStoreGroupsError(code: .invalidConfiguration, message: problem)
        }
        let observer = observer ?? SilentObserver()
        let shared = sharedCache.map {
            SharedCacheGuard($0, configuration: configuration, timeSource: timeSource, observer: observer)
        }
        self.policies = policies
        self.source = source
        self.shared = shared
        self.configuration = configuration
        self.timeSource = timeSource
        self.flights = SingleFlight(now: timeSource.now)
        self.observer = observer
        self.decisionLog = decisionLog
        self.shadow = PolicyShadow(live: policies, candidate: candidatePolicies, timeSource: timeSource)
        self.rateLimitGate = RateLimitGate(
            configuration: configuration.rateLimits,
            shared: shared,
            timeSource: timeSource,
            observer: observer
        )
        let freshness = configuration.freshness
        self.timeToLiveSeconds = freshness.timeToLive.seconds
        self.negativeTimeToLiveSeconds = freshness.negativeTimeToLive.seconds
        self.maximumAgeSeconds = freshness.lifetime(of: .groups).seconds
        self.refreshAheadSeconds = freshness.refreshPoint(draw: 0)?.seconds ?? .infinity
        let trims = configuration.localCache.returnsFreedMemoryToSystem
        let local = LocalGroupsCache(capacityBytes: configuration.localCache.capacityBytes) {
            if trims { LocalGroupsCache.trimHeap() }
        }
        self.local = local
        self.invalidations =
            shared == nil
            ? nil
            : InvalidationWatch(
                interval: configuration.sharedCache.invalidationCheckInterval,
                local: local,
                now: timeSource.now
            )
        self.reloadHandler = policies.addReloadHandler { outcome, revision in
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
    ///   - sharedCache: A cache shared by the fleet, or `nil` for this process alone.
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
        sharedCache: (any SharedGroupsCache)? = nil,
        configuration: Configuration = Configuration(),
        timeSource: TimeSource = .system,
        observer: (any GroupDecisionObserver)? = nil,
        decisionLog: DecisionLog? = nil,
        candidatePolicies: PolicyStore? = nil
    ) throws(AppStoreGroupsError) {
        try self.init(
            policies: policies,
            source: try AppStoreClientsSource(clients),
            sharedCache: sharedCache,
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

    /// The customer's Decision under the policy serving now.
    ///
    /// - Parameters:
    ///   - anyTransactionID: Any of the customer's transaction ids (use the same one for a customer
    ///     everywhere, and for ``invalidate(anyTransactionID:)``): 1 to 128 characters of
    ///     `A-Z a-z 0-9 _ -`, checked before anything else is done.
    ///   - entitlements: The product ids your backend verified from the customer's transactions.
    ///   - environment: Where the transactions come from.
    /// - Returns: The Decision with where its groups came from, when they were fetched, and the
    ///   policy that made it.
    /// - Throws: `AppStoreGroupsError`: `AppStoreGroupsError.Code.invalidArgument` for a
    ///   malformed id (no budget spent); the fetch's own error when fetching failed and no answer
    ///   within the stale-if-error window was left (nothing granted);
    ///   `AppStoreGroupsError.Code.transactionIDNotFound` (also from the negative cache);
    ///   `AppStoreGroupsError.Code.rateLimitExceeded` without an HTTP status when the budget or
    ///   a `Retry-After` instant is further away than ``RateLimitGate/Configuration/maximumRateLimitWait``.
    public func decision(
        anyTransactionID: String,
        entitlements: Set<String> = [],
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> ServedDecision {
        let loaded: Loaded
        do {
            // A hit is served without suspending: one clock read, one lookup under one lock (and,
            // with a shared cache, one look at the invalidation count read last).
            switch try cached(anyTransactionID, in: environment) {
            case .hit(let hit):
                loaded = hit
            case .miss:
                observer.cacheMiss(GroupDecisionEvent.CacheMiss(environment: environment))
                loaded = try await groups(anyTransactionID, in: environment)
            case .unconfirmed:
                if let hit = try await confirmedHit(anyTransactionID, in: environment) {
                    loaded = hit
                } else {
                    observer.cacheMiss(GroupDecisionEvent.CacheMiss(environment: environment))
                    loaded = try await groups(anyTransactionID, in: environment)
                }
            }
        } catch {
            if let decisionLog {
                decisionLog.record(
                    DecisionLogRecord(
                        time: timeSource.now(),
                        customerHash: decisionLog.customerHash(anyTransactionID),
                        environment: environment.rawValue,
                        policyRevision: policies.revision,
                        errorCode: error.code.description
                    )
                )
            }
            throw error
        }
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
        if let decisionLog, let customerHash {
            decisionLog.record(
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
}
