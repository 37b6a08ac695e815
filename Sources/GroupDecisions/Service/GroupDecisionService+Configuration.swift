import AppStoreGroups
import GroupPolicy

extension GroupDecisionService {
    /// How fresh answers must be, how long callers wait, and how fast requests may go, nested by
    /// concern.
    ///
    /// - ``freshness``: every window an answer lives through (time to live, refresh point and its
    ///   spread, stale-if-error, the hard cap on staleness, the negative time to live), as one
    ///   ``FreshnessPolicy``.
    /// - ``rateLimits``: the budgets, waits and holds of the service's
    ///   ``GroupDecisionService/rateLimitGate``, stored as the gate's own
    ///   ``RateLimitGate/Configuration``, with the refresh reserve and how a failing or slow shared
    ///   cache is left alone (the gate, which can be made on its own, needs those too; the service
    ///   uses the same settings for its own calls to the cache).
    /// - ``sharedCache``: the fetch lock and the invalidation check.
    /// - ``localCache``: this process's cache of answers.
    /// - ``maximumRefreshesInFlight``: how many refreshes ahead run at once.
    ///
    /// Every default is chosen for an app server answering people: see the DocC article "Serving
    /// decisions at fleet scale", section "Defaults".
    public struct Configuration: Sendable {
        /// Every window an answer lives through.
        ///
        /// Default ``FreshnessPolicy/init(timeToLive:)`` with 5 minutes: fresh for 5 minutes, due
        /// for a refresh ahead after 225 seconds (plus each answer's share of a 30-second spread),
        /// never stale on error, and never served more than 55 minutes past its time to live (an
        /// hour after its fetch); a not-found answer is remembered 30 seconds.
        ///
        /// Answers are kept in this process and in the shared cache (the group index included) as
        /// long as they may be served at all, ``FreshnessPolicy/lifetime(of:)``, so that past their
        /// time to live they can be served stale while the fleet's budget has no token to spare
        /// for refreshing them (see ``RateLimitGate/Configuration/refreshReserve``). Refreshes
        /// ahead run inside ``GroupDecisionService/run()``: without `run()` nothing is refreshed
        /// ahead. Set ``FreshnessPolicy/maximumStaleness`` to zero and
        /// ``FreshnessPolicy/refreshAfter`` to `nil` for a fixed time to live. See the DocC article
        /// "Serving decisions at fleet scale", section "A time to live that bends with the budget".
        public var freshness = FreshnessPolicy()
        /// The budgets, waits and holds of the service's ``GroupDecisionService/rateLimitGate``,
        /// the refresh reserve, and how a shared cache that fails or is slow is left alone.
        ///
        /// Default ``RateLimitGate/Configuration/init()``: Apple's limits (50 requests a second in
        /// production, 5 in the sandbox), a reserve of 0.2 of the burst for first fetches, no
        /// fallback share, a 1-second wait, a 1-hour longest hold, a 60-second hold without
        /// `Retry-After`, a 5-second retry interval for a failed shared cache, and 5 calls of 150
        /// milliseconds or more in a row for a slow one. Make a gate of your own with the
        /// service's settings: `RateLimitGate(configuration: configuration.rateLimits)`.
        public var rateLimits = RateLimitGate.Configuration()
        /// The shared cache's fetch lock and invalidation check.
        ///
        /// Default ``SharedCache/init()``.
        public var sharedCache = SharedCache()
        /// This process's cache of answers.
        ///
        /// Default ``LocalCache/init()``.
        public var localCache = LocalCache()
        /// The most refreshes ahead one process runs at once.
        ///
        /// Default 4. Customers due a refresh while that many run wait in a queue of at most
        /// ``GroupDecisionService/maximumQueuedRefreshes``; beyond it, a hit asks nothing and the
        /// next hit asks again. At most one refresh per customer runs in a process, and one in the
        /// fleet (it takes the shared cache's fetch lock without waiting, and skips when another
        /// process holds it); it asks for a token only when one is banked beyond the refresh
        /// reserve, and never waits for one.
        public var maximumRefreshesInFlight: Int = 4

        /// The defaults.
        public init() {}

        /// The longest any duration of a configuration may be: ten years.
        ///
        /// Far beyond any sensible setting, and far enough inside the range of the arithmetic done
        /// with it (milliseconds in 64 bits for a shared cache, instants as `Date`) that no sum or
        /// conversion of two of them overflows.
        public static let longestDuration = DurationLimit.longest

        /// What is wrong with the configuration, or `nil`: one line naming the field by its path.
        var problem: String? {
            if let problem = freshness.problem(naming: "freshness.") { return problem }
            let durations: [(String, Duration)] = [
                ("sharedCache.fetchLockTimeToLive", sharedCache.fetchLockTimeToLive),
                ("sharedCache.fetchLockWait", sharedCache.fetchLockWait),
                ("sharedCache.fetchLockPollInterval", sharedCache.fetchLockPollInterval),
                ("sharedCache.invalidationCheckInterval", sharedCache.invalidationCheckInterval),
                ("localCache.timeToLive", localCache.timeToLive),
                ("localCache.sweepInterval", localCache.sweepInterval),
            ]
            if let problem = DurationLimit.firstTooLong(durations) { return problem }
            if let problem = sharedCache.problem ?? localCache.problem { return problem }
            if localCache.timeToLive > .zero, sharedCache.invalidationCheckInterval > localCache.timeToLive {
                return "sharedCache.invalidationCheckInterval must be at most localCache.timeToLive"
            }
            if maximumRefreshesInFlight < 1 { return "maximumRefreshesInFlight must be at least 1" }
            return rateLimits.problem.map { "rateLimits.\($0)" }
        }
    }
}
