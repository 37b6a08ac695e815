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
/// - **Budget.** A token bucket per endpoint and environment at ``Configuration/requestsPerSecond``,
///   banking up to ``Configuration/requestBurst``. With a shared cache that keeps fleet budgets the
///   bucket is the fleet's, in the cache (``SharedFleetBudget/takeBudgetToken(from:maximumWait:)``);
///   while the cache fails, this process sends nothing beyond what it granted, unless
///   ``Configuration/fallbackShare`` gives it a share in a bucket of its own. Without a shared
///   cache, or with one that keeps no budget, the bucket is this process's. A call waits for its
///   token, and for a `Retry-After` instant, up to ``Configuration/maximumRateLimitWait`` in all;
///   beyond that it fails at once with `AppStoreGroupsError.Code.rateLimitExceeded`, nothing sent,
///   `AppStoreGroupsError.retryAfter` set and no HTTP status.
/// - **429.** A 429 closes the gate until its `Retry-After` instant, cut to
///   ``Configuration/maximumRateLimitHold`` from now (a far instant, or a server clock behind
///   Apple's, cannot close it for longer), at least a second, and
///   ``Configuration/rateLimitHoldWithoutRetryAfter`` when it names none. The error thrown carries
///   the instant the gate holds until.
/// - **Fleet.** With a shared cache the instant is written there, and read back before every
///   request: the shared instant is the one that holds, so a key deleted by an operator opens the
///   gate, and it holds no longer than the longest hold from when this process first read it (a
///   far instant left there by an earlier version holds an hour, not ten years). While the cache is
///   unavailable, what this process knows holds.
public final class RateLimitGate: Sendable {
    let configuration: Configuration
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
    ///   - configuration: The budgets, waits and holds. Default: ``Configuration/init()``, the
    ///     service's defaults; `serviceConfiguration.rateLimits` for a service's settings.
    ///   - sharedCaches: Where the fleet shares `Retry-After` instants and its budget
    ///     (``SharedCaches/rateLimits`` and ``SharedCaches/fleetBudget``; the others are not used).
    ///     Default: none, this process alone.
    ///   - sharedCacheHealth: When a failed or slow shared cache is left alone. Default: the
    ///     service's defaults.
    ///   - timeSource: The wall clock and sleep. Default `TimeSource.system`.
    ///   - observer: Told of 429s and refusals. Default: none.
    /// - Throws: `AppStoreGroupsError.Code.invalidConfiguration` for a configuration out of range.
    public convenience init(
        configuration: Configuration = Configuration(),
        sharedCaches: SharedCaches = SharedCaches(),
        sharedCacheHealth: SharedCacheHealth = SharedCacheHealth(),
        timeSource: TimeSource = .system,
        observer: (any GroupDecisionObserver)? = nil
    ) throws(AppStoreGroupsError) {
        if let problem = configuration.problem ?? sharedCacheHealth.problem {
            throw AppStoreGroupsError(code: .invalidConfiguration, message: problem)
        }
        let observer = observer ?? SilentObserver()
        self.init(
            configuration: configuration,
            shared: sharedCaches.isEmpty
                ? nil
                : SharedCacheGuard(sharedCaches, health: sharedCacheHealth, timeSource: timeSource, observer: observer),
            timeSource: timeSource,
            observer: observer
        )
    }

    init(
        configuration: Configuration,
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
        observer.fetchStarted(GroupDecisionEvent.FetchStarted(endpoint: key.endpoint, environment: key.environment))
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

    // MARK: Admission

    /// Waits for the endpoint's `Retry-After` instant and a token (reading the gate again after the
    /// token's wait, for a 429 received meanwhile), or throws when the waits would pass the limit.
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

    /// Admits a refresh's request (send it with ``sendAdmitted(_:_:)``) only when a token is banked
    /// now beyond the reserve kept for first fetches and no `Retry-After` instant holds; otherwise
    /// throws `AppStoreGroupsError.Code.rateLimitExceeded` at once, without an HTTP status, and
    /// unreported: no caller was refused.
    func admitRefresh(_ key: EndpointKey) async throws(AppStoreGroupsError) {
        if let until = await heldUntil(key) { throw refreshHeld(key, until: until) }
        if let wait = await takeRefreshToken(key) { throw refreshRefused(key, wait: wait) }
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

    private func sleep(_ duration: Duration) async throws(AppStoreGroupsError) {
        guard duration > .zero else { return }
        do {
            try await timeSource.sleep(duration)
        } catch {
            throw AppStoreGroupsError(code: .cancelled, message: "cancelled while waiting for the rate limit")
        }
    }
}
