import AppStoreGroups
public import GroupPolicy

extension GroupDecisionService {
    /// How fresh answers must be, how long callers wait, and how fast requests may go.
    ///
    /// Every default is chosen for an app server answering people: see the DocC article "Serving
    /// decisions at fleet scale", section "Defaults".
    public struct Configuration: Sendable {
        /// How long an answer is served from a cache without asking Apple again.
        ///
        /// Default 5 minutes.
        /// Apple sends no notification when a group or a role changes, so this is how stale a
        /// decision may be at worst.
        public var timeToLive: Duration = .seconds(300)
        /// How long after ``timeToLive`` an answer may still be served, marked stale.
        ///
        /// It is served only when fetching a fresh one fails. Default zero: off. Never past
        /// ``maximumAge``, which caps the window.
        ///
        /// Off by default because serving an answer Apple can no longer confirm is a grant from
        /// data the library cannot vouch for; turn it on (a minute, say) to ride out short outages
        /// when that trade is yours to make. Beyond it, a failed fetch fails closed.
        public var staleIfError: Duration = .zero
        /// The oldest an answer may be when it is served, whatever the reason: fresh, stale while
        /// the budget is low, or stale after a failed fetch.
        ///
        /// Default 1 hour; at least ``timeToLive``. Answers are kept this long (in this process
        /// and in the shared cache, the group index included) so that, past their time to live,
        /// they can still be served marked stale while the fleet's budget has no token to spare
        /// for refreshing them (see ``refreshReserve``). Past it nothing of the old answer is
        /// served: the caller waits for a fetch like a first one, or fails closed. It also caps
        /// ``staleIfError``. Set it to ``timeToLive`` (with ``refreshAhead`` `nil`) for a fixed
        /// time to live: an answer is then fetched again as soon as it expires, whatever the
        /// budget. See the DocC article "Serving decisions at fleet scale", section "A time to
        /// live that bends with the budget".
        public var maximumAge: Duration = .seconds(3600)
        /// How far into its time to live an answer is refreshed ahead, as a fraction of
        /// ``timeToLive`` greater than 0 and less than 1, or `nil` for never.
        ///
        /// Default 0.75: a call that finds an answer older than three quarters of its time to live
        /// is answered from the cache at once, and one refresh starts in the background, so a
        /// customer asked for often never waits for Apple after their first request. At most one
        /// refresh per customer runs in a process, and one in the fleet (it takes the shared
        /// cache's fetch lock without waiting, and skips when another process holds it); it asks
        /// for a token only when one is banked beyond ``refreshReserve``, and never waits for one.
        /// Refreshes run inside ``GroupDecisionService/run()``, at most
        /// ``maximumRefreshesInFlight`` at once: without `run()` nothing is refreshed ahead.
        public var refreshAhead: Double? = 0.75
        /// The share of the budget's burst kept for first fetches: refreshes (ahead, or of an
        /// expired answer) take a token only when one is banked now and this many would still be
        /// banked after, at least 0 and less than 1.
        ///
        /// Default 0.2: with Apple's production budget (a burst of 50) a refresh leaves at least 10
        /// tokens for customers with no answer. The reserve is at most the burst less one token,
        /// so a full bucket always lets a refresh go. Refreshes never wait for a token; a customer
        /// with no answer (or one older than ``maximumAge``) waits up to
        /// ``maximumRateLimitWait`` as before.
        public var refreshReserve: Double = 0.2
        /// The most refreshes ahead one process runs at once.
        ///
        /// Default 4. Customers due a refresh while that many run wait in a queue of at most
        /// ``GroupDecisionService/maximumQueuedRefreshes``; beyond it, a hit asks nothing and the
        /// next hit asks again.
        public var maximumRefreshesInFlight: Int = 4
        /// How long Apple's `TransactionIdNotFoundError` is remembered.
        ///
        /// Default 30 seconds.
        /// Short, because a purchase that has just happened may not be known to the groups
        /// endpoints yet; long enough that a client retrying in a loop costs one request per
        /// period.
        public var negativeTimeToLive: Duration = .seconds(30)
        /// When a shared cache's fetch lock lapses if its holder never releases it.
        ///
        /// Default 10 seconds.
        public var fetchLockTimeToLive: Duration = .seconds(10)
        /// How long a process that finds the fetch lock taken polls for the holder's answer.
        ///
        /// Default 2 seconds.
        /// After it, the caller fetches itself (within the budget and the 429 gate) rather than
        /// failing: a holder that died costs one extra request, not a failed decision.
        public var fetchLockWait: Duration = .seconds(2)
        /// How often a waiting process polls the shared cache.
        ///
        /// Default 50 milliseconds.
        public var fetchLockPollInterval: Duration = .milliseconds(50)
        /// Requests a second each endpoint may be sent, per environment: Get Customer Groups and
        /// Get Group Members (through ``GroupDecisionService/rateLimitGate``) have a budget each.
        ///
        /// Default Apple's limits: 50 in production, 5 in the sandbox.
        ///
        /// With a shared cache that keeps fleet budgets (`RedisGroupsCache`,
        /// `InMemoryGroupsCache`) this is the **fleet's** budget, Apple's limit for the app: every
        /// process takes its tokens from one bucket in the cache, whatever the number of
        /// processes. While the cache fails, a process sends nothing more (see ``fallbackShare``). Without a shared cache, or with one that keeps no budget, it
        /// is this process's budget: in a fleet of N such processes give each 1/N of Apple's
        /// limit.
        public var requestsPerSecond: [StoreEnvironment: Double] = [.production: 50, .sandbox: 5]
        /// The most requests of each endpoint sent at once after a quiet spell, per environment:
        /// the tokens a budget banks.
        ///
        /// Default: none set, one second's worth of ``requestsPerSecond`` (at least 1). Each must
        /// be at least 1. Like the rate, it is the fleet's with a shared cache that keeps budgets.
        public var requestBurst: [StoreEnvironment: Double] = [:]
        /// The fraction of the fleet's budget (rate and burst) one process may still spend of its own
        /// while the shared cache that keeps the budget fails, at least 0 and at most 1.
        ///
        /// Default 0: a process cut off from the shared cache sends nothing beyond the tokens the
        /// cache granted, so the fleet's requests never exceed its budget (plus one burst), however
        /// many of its processes lose the cache; meanwhile it serves the answers it holds (stale,
        /// within ``maximumAge``, reason `budget`) and refuses customers it has none for, as when
        /// the budget is spent. A share `s` above 0 trades that guarantee for availability: each cut-off
        /// process then sends up to `s` of the budget of its own (the burst share at least one
        /// request), so with `k` processes cut off the fleet may send `(1 + k × s)` times its
        /// budget. Without a shared cache that keeps budgets this does not apply.
        public var fallbackShare: Double = 0
        /// The longest a call waits for the budget or for a `Retry-After` instant.
        ///
        /// A longer wait fails at once with `AppStoreGroupsError.Code.rateLimitExceeded`, nothing
        /// sent. Default 1 second; zero fails fast.
        public var maximumRateLimitWait: Duration = .seconds(1)
        /// The longest a 429 closes the rate-limit gate, whatever instant its `Retry-After` names.
        ///
        /// Default 1 hour: Apple enforces its limits per hour, so a longer instant is a wrong
        /// header, or this server's clock behind Apple's; an instant read back from a shared cache
        /// is cut to it too.
        public var maximumRateLimitHold: Duration = .seconds(3600)
        /// How long a 429 without a usable `Retry-After` closes the gate.
        ///
        /// Default 60 seconds.
        public var rateLimitHoldWithoutRetryAfter: Duration = .seconds(60)
        /// With a shared cache, the longest this process serves an answer from its own cache
        /// before reading the shared cache again.
        ///
        /// Most hits stay in memory. Default 5 seconds. An invalidation made through any process
        /// stops every process serving its copy before it returns (see
        /// ``invalidationCheckInterval``); with a shared cache that counts no invalidations, or
        /// while the shared cache cannot be read, this is how long a copy may outlive one.
        public var localTimeToLive: Duration = .seconds(5)
        /// With a shared cache that counts invalidations, how recently this process must have read
        /// the count for a copy kept here to be served without reading it again; and how long an
        /// invalidation waits, once the shared cache has forgotten the answers, before it returns.
        ///
        /// Default 250 milliseconds; positive, and at most ``localTimeToLive`` (unless that is
        /// zero, when nothing is kept here). When an invalidation through any process returns, no
        /// process serves the answers it removed: a copy is served only while the count read less
        /// than this ago, which saw the invalidation, confirms it. It costs each process at most one
        /// read of the count per interval (none while it serves nothing from its copies) and each
        /// invalidation this wait. See the DocC article "Serving decisions at fleet scale", section
        /// "Invalidation across the fleet".
        public var invalidationCheckInterval: Duration = .milliseconds(250)
        /// How long the shared cache is left alone after it fails.
        ///
        /// Meanwhile the service works from its own cache (and sends Apple nothing beyond what the
        /// cache granted, see ``fallbackShare``), so a cache that hangs costs one timeout per
        /// interval instead of several per request. Default 5 seconds.
        public var sharedCacheRetryInterval: Duration = .seconds(5)
        /// A shared-cache call that takes this long or longer is slow.
        ///
        /// Default 150 milliseconds: a Redis on the same network answers in about one, and an
        /// uncached decision makes several calls; the time counted is the caller's, so a process
        /// starved of CPU sees its calls slower than the cache is.
        public var sharedCacheSlowCallThreshold: Duration = .milliseconds(150)
        /// How many slow shared-cache calls in a row make the service leave the cache alone for
        /// ``sharedCacheRetryInterval``, as after a failure; zero never does.
        ///
        /// Default 5: about one uncached decision's calls, so a passing stall is not taken for a slow
        /// cache.
        public var sharedCacheSlowCallsInARow: Int = 5
        /// The most bytes this process's cache of answers may cost, counted as they are held on the
        /// heap.
        ///
        /// Default 64 MiB.
        public var capacityBytes: Int = 64 << 20
        /// How often ``GroupDecisionService/run()`` removes expired answers from this process's
        /// cache.
        ///
        /// Default 60 seconds.
        public var sweepInterval: Duration = .seconds(60)
        /// Whether this process's cache hands the pages its removed answers freed back to the
        /// system (glibc's `malloc_trim`, nothing on other platforms).
        ///
        /// Default `false`: trimming works on the whole process's heap, not only the cache's, so
        /// only the app may decide to pay for it. Turn it on in a process whose footprint matters
        /// more than the few milliseconds a trim takes after every eighth of the capacity freed.
        public var returnsFreedMemoryToSystem = false

        /// The defaults.
        public init() {}

        /// The longest any duration of a configuration may be: ten years.
        ///
        /// Far beyond any sensible setting, and far enough inside the range of the arithmetic done
        /// with it (milliseconds in 64 bits for a shared cache, instants as `Date`) that no sum or
        /// conversion of two of them overflows.
        public static let longestDuration = RateLimitGate.Configuration.longestDuration

        /// The settings the service's ``GroupDecisionService/rateLimitGate`` is made with, taken
        /// from this configuration.
        ///
        /// Pass it to make a gate of your own with the service's budgets:
        /// `RateLimitGate(configuration: configuration.rateLimitGate)`.
        public var rateLimitGate: RateLimitGate.Configuration {
            var gate = RateLimitGate.Configuration()
            gate.requestsPerSecond = requestsPerSecond
            gate.requestBurst = requestBurst
            gate.refreshReserve = refreshReserve
            gate.fallbackShare = fallbackShare
            gate.maximumRateLimitWait = maximumRateLimitWait
            gate.maximumRateLimitHold = maximumRateLimitHold
            gate.rateLimitHoldWithoutRetryAfter = rateLimitHoldWithoutRetryAfter
            gate.sharedCacheRetryInterval = sharedCacheRetryInterval
            gate.sharedCacheSlowCallThreshold = sharedCacheSlowCallThreshold
            gate.sharedCacheSlowCallsInARow = sharedCacheSlowCallsInARow
            return gate
        }

        /// What is wrong with the configuration, or `nil`: the service's own settings first, then
        /// the gate's.
        var problem: String? {
            let durations: [(String, Duration)] = [
                ("the time to live", timeToLive), ("the stale-if-error window", staleIfError),
                ("the maximum age", maximumAge), ("the negative time to live", negativeTimeToLive),
                ("the fetch lock's time to live", fetchLockTimeToLive), ("the fetch lock wait", fetchLockWait),
                ("the fetch lock poll interval", fetchLockPollInterval),
                ("the local time to live", localTimeToLive),
                ("the invalidation check interval", invalidationCheckInterval),
                ("the sweep interval", sweepInterval),
            ]
            if let problem = RateLimitGate.Configuration.tooLong(durations) { return problem }
            if timeToLive <= .zero { return "the time to live must be positive" }
            if staleIfError < .zero { return "the stale-if-error window must not be negative" }
            if negativeTimeToLive < .zero { return "the negative time to live must not be negative" }
            if fetchLockTimeToLive <= .zero { return "the fetch lock's time to live must be positive" }
            if fetchLockWait < .zero { return "the fetch lock wait must not be negative" }
            if fetchLockPollInterval <= .zero { return "the fetch lock poll interval must be positive" }
            if localTimeToLive < .zero { return "the local time to live must not be negative" }
            if invalidationCheckInterval <= .zero { return "the invalidation check interval must be positive" }
            if localTimeToLive > .zero, invalidationCheckInterval > localTimeToLive {
                return "the invalidation check interval must be at most the local time to live"
            }
            if sweepInterval <= .zero { return "the sweep interval must be positive" }
            if maximumAge < timeToLive { return "the maximum age must be at least the time to live" }
            if let refreshAhead, !(refreshAhead > 0 && refreshAhead < 1) {
                return "the refresh-ahead fraction must be greater than 0 and less than 1, or nil"
            }
            if maximumRefreshesInFlight < 1 { return "the refreshes in flight must be at least 1" }
            return rateLimitGate.problem
        }
    }
}
