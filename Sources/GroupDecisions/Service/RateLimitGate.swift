public import AppStoreGroups
public import Foundation
public import GroupPolicy
import GroupPolicyBasics

/// Apple's rate limits, kept for every request to one endpoint in one environment: a request budget,
/// and after a 429 nothing sent before the `Retry-After` instant, by any caller of this process or
/// of any process sharing the cache.
///
/// A ``GroupDecisionService`` sends every Get Customer Groups request through its gate
/// (``GroupDecisionService/rateLimitGate``); send other requests to Apple's groups endpoints through
/// the same gate, so that they have their own budget and their 429s hold only their endpoint:
///
/// ```swift
/// let page = try await service.rateLimitGate.send(.groupMembers, in: .sandbox) {
///     () throws(AppStoreGroupsError) in
///     try await client.groupMembers(groupID: groupID, limit: 100, paginationToken: token)
/// }
/// ```
///
/// - **Budget.** A token bucket per endpoint and environment at
///   ``GroupDecisionService/Configuration/requestsPerSecond``, banking up to
///   ``GroupDecisionService/Configuration/requestBurst``. With a shared cache that keeps fleet
///   budgets the bucket is the fleet's, in the cache
///   (``SharedRateLimitState/takeBudgetToken(from:maximumWait:)``); while the cache fails, this
///   process sends nothing beyond what it granted, unless
///   ``GroupDecisionService/Configuration/fallbackShare`` gives it a share in a bucket of its own. Without a
///   shared cache, or with one that keeps no budget, the bucket is this process's. A call waits for
///   its token, and for a `Retry-After` instant, up to
///   ``GroupDecisionService/Configuration/maximumRateLimitWait`` in all; beyond that it fails at
///   once with `AppStoreGroupsError.Code.rateLimitExceeded`, nothing sent,
///   `AppStoreGroupsError.retryAfter` set and no HTTP status.
/// - **429.** A 429 closes the gate until its `Retry-After` instant, cut to
///   ``GroupDecisionService/Configuration/maximumRateLimitHold`` from now (a far instant, or a
///   server clock behind Apple's, cannot close it for longer), at least a second, and
///   ``GroupDecisionService/Configuration/rateLimitHoldWithoutRetryAfter`` when it names none. The
///   error thrown carries the instant the gate holds until.
/// - **Fleet.** With a shared cache the instant is written there, and read back before every
///   request: the shared instant is the one that holds, so a key deleted by an operator opens the
///   gate, and it holds no longer than the longest hold from when this process first read it (a
///   far instant left there by an earlier version holds an hour, not ten years). While the cache is
///   unavailable, what this process knows holds.
public final class RateLimitGate: Sendable {
    let configuration: GroupDecisionService.Configuration
    let shared: SharedCacheGuard?
    let timeSource: TimeSource
    let observer: any GroupDecisionObserver
    /// This process's budget: without a shared cache, or with one that keeps no budget.
    let buckets = Locked<[EndpointKey: TokenBucket]>([:])
    /// This process's share of the fleet's budget, while the shared cache fails or is skipped.
    let shareBuckets = Locked<[EndpointKey: TokenBucket]>([:])
    /// The instants that hold this process: its own 429s' (already cut to the longest hold), and the
    /// shared cache's as last read with when this process first saw it.
    let instants = Locked<[EndpointKey: (own: Date?, shared: (instant: Date, seen: Date)?)]>([:])

    /// Creates a gate of its own, for an app that calls Apple's groups endpoints without a decision
    /// service (a service has one: ``GroupDecisionService/rateLimitGate``).
    ///
    /// - Parameters:
    ///   - configuration: The budgets, waits and holds. Default: ``GroupDecisionService/Configuration/init()``.
    ///   - sharedCache: Where the fleet shares `Retry-After` instants, or `nil` for this process alone.
    ///   - timeSource: The wall clock and sleep. Default `TimeSource.system`.
    ///   - observer: Told of 429s and refusals. Default: none.
    /// - Throws: `AppStoreGroupsError.Code.invalidConfiguration` for a configuration out of range.
    public convenience init(
        configuration: GroupDecisionService.Configuration = GroupDecisionService.Configuration(),
        sharedCache: (any SharedGroupsCache)? = nil,
        timeSource: TimeSource = .system,
        observer: (any GroupDecisionObserver)? = nil
    ) throws(AppStoreGroupsError) {
        if let problem = configuration.problem {
            throw AppStoreGroupsError(code: .invalidConfiguration, message: problem)
        }
        let observer = observer ?? SilentObserver()
        self.init(
            configuration: configuration,
            shared: sharedCache.map {
                SharedCacheGuard($0, configuration: configuration, timeSource: timeSource, observer: observer)
            },
            timeSource: timeSource,
            observer: observer
        )
    }

    init(
        configuration: GroupDecisionService.Configuration,
        shared: SharedCacheGuard?,
        timeSource: TimeSource,
        observer: any GroupDecisionObserver
    ) {
        self.configuration = configuration
        self.shared = shared
        self.timeSource = timeSource
        self.observer = observer
    }

    /// Sends one request through the gate: waits for the budget and any `Retry-After` instant (or
    /// throws, nothing sent), runs `request`, and closes the gate when it fails with a 429.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint the request goes to.
    ///   - environment: The environment it goes to.
    ///   - request: The request: one call of the client.
    /// - Returns: What `request` returned.
    /// - Throws: `AppStoreGroupsError.Code.rateLimitExceeded` without an HTTP status when the wait
    ///   would be too long; otherwise what `request` threw, a 429's `retryAfter` set to the gate's
    ///   instant.
    public func send<Answer: Sendable>(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment,
        _ request: () async throws(AppStoreGroupsError) -> Answer
    ) async throws(AppStoreGroupsError) -> Answer {
        let key = EndpointKey(environment: environment, endpoint: endpoint)
        try await admit(key)
        return try await sendAdmitted(key, request)
    }

    /// Sends a request that has its token: tells the observer, and closes the gate after a 429.
    func sendAdmitted<Answer: Sendable>(
        _ key: EndpointKey,
        _ request: () async throws(AppStoreGroupsError) -> Answer
    ) async throws(AppStoreGroupsError) -> Answer {
        let endpoint = key.endpoint
        let environment = key.environment
        observer.fetchStarted(GroupDecisionEvent.FetchStarted(endpoint: endpoint, environment: environment))
        let start = timeSource.now()
        do {
            let result = try await request()
            finished(key, start: start, status: 200, error: nil)
            return result
        } catch {
            finished(key, start: start, status: error.httpStatus, error: error)
            throw await close(key, after: error)
        }
    }

    /// The instant before which nothing goes to the endpoint, or `nil` while the gate is open.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - environment: The environment.
    /// - Returns: The instant, read from the shared cache when there is one.
    public func retryAfter(_ endpoint: GroupsEndpoint, in environment: StoreEnvironment) async -> Date? {
        await heldUntil(EndpointKey(environment: environment, endpoint: endpoint))
    }

    private func finished(_ key: EndpointKey, start: Date, status: Int?, error: AppStoreGroupsError?) {
        observer.fetchFinished(
            GroupDecisionEvent.FetchFinished(
                endpoint: key.endpoint,
                environment: key.environment,
                duration: Duration.roundedUp(from: start, to: timeSource.now()),
                httpStatus: status,
                error: error
            )
        )
    }

    // MARK: Waiting

    /// Waits for the endpoint's `Retry-After` instant and a token, or throws when the waits together
    /// would pass the configured wait.
    ///
    /// The gate is read again after waiting for a token: a 429 received meanwhile, here or in another
    /// process, names an instant this call must not leave before.
    private func admit(_ key: EndpointKey) async throws(AppStoreGroupsError) {
        var waited = Duration.zero
        var holdsToken = false
        while true {
            if let until = await heldUntil(key) {
                let wait = Duration.roundedUp(from: timeSource.now(), to: until)
                if wait > .zero {
                    guard waited + wait <= configuration.maximumRateLimitWait else {
                        throw refusedByRetryAfter(key, until: until)
                    }
                    try await sleep(wait)
                    waited += wait
                    continue
                }
            }
            if holdsToken { return }
            let token = await takeToken(key, maximumWait: configuration.maximumRateLimitWait - waited)
            guard let reserved = token.wait else {
                throw refused(key, retryAfter: timeSource.now() + token.retryAfter, budget: token.budget)
            }
            holdsToken = true
            // No time passed since the gate was read: send now.
            guard reserved > .zero else { return }
            try await sleep(reserved)
            waited += reserved
        }
    }

    /// Whose budget a token came from.
    enum Budget {
        /// This process's own: no shared cache, or one that keeps no budget.
        case process
        /// The fleet's, in the shared cache.
        case fleet
        /// This process's share of the fleet's, while the shared cache fails or is skipped.
        case share
        /// None: the shared cache that keeps the fleet's budget fails, and this process spends
        /// nothing beyond what it granted (a fallback share of 0).
        case cutOff
    }

    /// Takes a token from the budget that holds now (see the type's discussion): the wait before
    /// using it, or `nil` (nothing taken) with the seconds until the next is due.
    private func takeToken(
        _ key: EndpointKey,
        maximumWait: Duration
    ) async -> (wait: Duration?, retryAfter: TimeInterval, budget: Budget) {
        let budget: Budget
        switch await fleetToken(key, .waitingAtMost(maximumWait)) {
        case .answered(.taken(let wait)): return (wait, 0, .fleet)
        case .answered(.notTaken(let wait)): return (nil, wait.seconds, .fleet)
        case .answered(.notSupported): budget = .process
        case .fallBack(let fallback): budget = fallback
        }
        if budget == .cutOff { return (nil, Self.cutOffRetrySeconds(configuration), .cutOff) }
        let (reserved, rate) = withLocalBucket(key, budget: budget) { bucket, now in
            (bucket.reserve(now: now, maximumWait: maximumWait), bucket.rate)
        }
        return (reserved, 1 / rate, budget)
    }

    /// The fleet's answer to `request` when the shared cache keeps the fleet's budget; otherwise
    /// the budget that holds instead: this process's own without a shared cache that keeps one,
    /// this process's share when the cache did not answer.
    func fleetToken(_ key: EndpointKey, _ request: FleetRequest) async -> FleetAnswer {
        guard let shared, shared.cache.keepsFleetBudget else { return .fallBack(.process) }
        let rate = configuration.rate(for: key.environment)
        let burst = configuration.burst(for: key.environment)
        let reserve = configuration.reserve(burst: burst)
        let budget = FleetBudget(key.endpoint, in: key.environment, ratePerSecond: rate, burst: burst)
        let answer = await shared.read(evenWhenSlow: true) { cache throws(AppStoreGroupsError) in
            switch request {
            case .waitingAtMost(let maximumWait):
                try await cache.takeBudgetToken(from: budget, maximumWait: maximumWait)
            case .keepingReserve:
                try await cache.takeBudgetToken(from: budget, keeping: reserve)
            }
        }
        return answer.map(FleetAnswer.answered) ?? .fallBack(configuration.fallbackShare > 0 ? .share : .cutOff)
    }

    /// When a cut-off process may try again: when it next asks the shared cache (at least a second).
    static func cutOffRetrySeconds(_ configuration: GroupDecisionService.Configuration) -> TimeInterval {
        max(1, configuration.sharedCacheRetryInterval.seconds)
    }

    /// Which of the fleet's tokens ``fleetToken(_:_:)`` asks for.
    enum FleetRequest {
        /// A request's: taken now, or reserved when due within the wait.
        case waitingAtMost(Duration)
        /// A refresh's: only when one is banked beyond the reserve kept for first fetches.
        case keepingReserve
    }

    /// What ``fleetToken(_:_:)`` found.
    enum FleetAnswer {
        /// The shared cache answered.
        case answered(FleetBudgetToken)
        /// The fleet's budget was not asked (or did not answer): this budget holds.
        case fallBack(Budget)
    }

    /// Runs `body` on `key`'s bucket in this process's budget (`.process`) or in its share of the
    /// fleet's (`.share`), made full at that budget's rate and burst on first use.
    func withLocalBucket<Result>(
        _ key: EndpointKey,
        budget: Budget,
        _ body: (inout TokenBucket, Date) -> Result
    ) -> Result {
        let share = budget == .share ? configuration.fallbackShare : 1
        let rate = configuration.rate(for: key.environment) * share
        let burst = max(1, configuration.burst(for: key.environment) * share)
        let now = timeSource.now()
        return (budget == .share ? shareBuckets : buckets).withLock { buckets in
            var bucket = buckets[key] ?? TokenBucket(rate: rate, burst: burst, now: now)
            let result = body(&bucket, now)
            buckets[key] = bucket
            return result
        }
    }

    private func refusedByRetryAfter(_ key: EndpointKey, until: Date) -> AppStoreGroupsError {
        let message = "the App Store asked for no \(key.endpoint) requests before this instant; none was sent"
        return refused(key, retryAfter: until, message: message, byRetryAfter: true)
    }

    private func refused(_ key: EndpointKey, retryAfter: Date, budget: Budget) -> AppStoreGroupsError {
        let rate = configuration.rate(for: key.environment)
        let message =
            switch budget {
            case .process: "this process's budget of \(rate) \(key.endpoint) requests a second is spent; none was sent"
            case .fleet: "the fleet's budget of \(rate) \(key.endpoint) requests a second is spent; none was sent"
            case .share:
                "this process's share (\(rate * configuration.fallbackShare) a second) of the fleet's budget of "
                    + "\(rate) \(key.endpoint) requests a second, kept while the shared cache is unavailable, "
                    + "is spent; none was sent"
            case .cutOff:
                "the shared cache that keeps the fleet's budget of \(rate) \(key.endpoint) requests a second is "
                    + "unavailable, and this process sends nothing beyond what it granted; none was sent"
            }
        return refused(key, retryAfter: retryAfter, message: message, byRetryAfter: false)
    }

    private func refused(
        _ key: EndpointKey,
        retryAfter: Date,
        message: String,
        byRetryAfter: Bool
    ) -> AppStoreGroupsError {
        observer.budgetExhausted(
            GroupDecisionEvent.BudgetExhausted(
                endpoint: key.endpoint,
                environment: key.environment,
                retryAfter: retryAfter,
                heldByRetryAfter: byRetryAfter
            )
        )
        return AppStoreGroupsError(code: .rateLimitExceeded, message: message, retryAfter: retryAfter)
    }

    private func sleep(_ duration: Duration) async throws(AppStoreGroupsError) {
        guard duration > .zero else { return }
        do {
            try await timeSource.sleep(duration)
        } catch {
            throw AppStoreGroupsError(code: .cancelled, message: "cancelled while waiting for the rate limit")
        }
    }
}
