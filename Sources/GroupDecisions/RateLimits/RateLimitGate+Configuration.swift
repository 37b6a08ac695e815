public import GroupPolicy

extension RateLimitGate {
    /// The budgets, waits and holds of a rate-limit gate.
    ///
    /// A ``GroupDecisionService`` keeps one in its configuration
    /// (``GroupDecisionService/Configuration/rateLimits``) and makes its gate with it; every default
    /// here is the service's. Make a gate of your own with the service's settings:
    /// `RateLimitGate(configuration: serviceConfiguration.rateLimits, sharedCaches: SharedCaches(cache))`.
    public struct Configuration: Sendable, Equatable {
        /// Requests a second each endpoint may be sent, per environment: each endpoint has a budget
        /// of its own.
        ///
        /// Default Apple's limits: 50 in production, 5 in the sandbox; an environment left out has
        /// its default. With a shared cache that keeps fleet budgets this is the **fleet's**
        /// budget, Apple's limit for the app: every process takes its tokens from one bucket in the
        /// cache. Without one, or with one that keeps no budget, it is this process's budget: in a
        /// fleet of N such processes give each 1/N of Apple's limit.
        public var requestsPerSecond: [StoreEnvironment: Double] = [.production: 50, .sandbox: 5]
        /// The most requests of each endpoint sent at once after a quiet spell, per environment:
        /// the tokens a budget banks.
        ///
        /// Default: none set, one second's worth of ``requestsPerSecond`` (at least 1). Each must
        /// be at least 1. Like the rate, it is the fleet's with a shared cache that keeps budgets.
        public var requestBurst: [StoreEnvironment: Double] = [:]
        /// The share of a budget's burst kept for first fetches: a refresh takes a token only when
        /// one is banked now and this many would still be banked after, at least 0 and less than 1.
        ///
        /// Default 0.2. The reserve is at most the burst less one token, so a full bucket always
        /// lets a refresh go.
        public var refreshReserve: Double = 0.2
        /// The fraction of the fleet's budget (rate and burst) one process may still spend of its own
        /// while the shared cache that keeps the budget fails, at least 0 and at most 1.
        ///
        /// Default 0: a process cut off from the shared cache sends nothing beyond the tokens the
        /// cache granted, so the fleet's requests never exceed its budget (plus one burst), however
        /// many of its processes lose the cache. A share `s` above 0 trades that guarantee for
        /// availability: each cut-off process then sends up to `s` of the budget of its own (the
        /// burst share at least one request), so with `k` processes cut off the fleet may send
        /// `(1 + k × s)` times its budget. Without a shared cache that keeps budgets this does not
        /// apply.
        public var fallbackShare: Double = 0
        /// The longest a call waits for the budget or for a `Retry-After` instant.
        ///
        /// A longer wait fails at once with `AppStoreGroupsError.Code.rateLimitExceeded`, nothing
        /// sent. Default 1 second; zero fails fast.
        public var maximumRateLimitWait: Duration = .seconds(1)
        /// The longest a 429 closes the gate, whatever instant its `Retry-After` names.
        ///
        /// Default 1 hour: Apple enforces its limits per hour, so a longer instant is a wrong
        /// header, or this server's clock behind Apple's; an instant read back from a shared cache
        /// is cut to it too.
        public var maximumRateLimitHold: Duration = .seconds(3600)
        /// How long a 429 without a usable `Retry-After` closes the gate.
        ///
        /// Default 60 seconds.
        public var rateLimitHoldWithoutRetryAfter: Duration = .seconds(60)
        /// The defaults.
        public init() {}

        /// What is wrong with the configuration, or `nil`: one line naming the field (a service
        /// names it under `rateLimits.`).
        var problem: String? {
            let durations: [(String, Duration)] = [
                ("maximumRateLimitWait", maximumRateLimitWait), ("maximumRateLimitHold", maximumRateLimitHold),
                ("rateLimitHoldWithoutRetryAfter", rateLimitHoldWithoutRetryAfter),
            ]
            if let problem = DurationLimit.firstTooLong(durations) { return problem }
            if maximumRateLimitWait < .zero { return "maximumRateLimitWait must not be negative" }
            if maximumRateLimitHold <= .zero { return "maximumRateLimitHold must be positive" }
            if rateLimitHoldWithoutRetryAfter <= .zero {
                return "rateLimitHoldWithoutRetryAfter must be positive"
            }
            if !(refreshReserve >= 0 && refreshReserve < 1) {
                return "refreshReserve must be at least 0 and less than 1"
            }
            for (environment, rate) in requestsPerSecond where !(rate > 0 && rate.isFinite) {
                return "requestsPerSecond[\(environment)] must be a positive number"
            }
            for (environment, burst) in requestBurst where !(burst >= 1 && burst.isFinite) {
                return "requestBurst[\(environment)] must be a number of at least 1"
            }
            if !(fallbackShare >= 0 && fallbackShare <= 1) {
                return "fallbackShare must be at least 0 and at most 1"
            }
            return nil
        }

        /// The tokens a refresh leaves banked in a bucket of `burst`: ``refreshReserve`` of it, at
        /// most the burst less one.
        func reserve(burst: Double) -> Double {
            max(0, min(refreshReserve * burst, burst - 1))
        }

        /// Requests a second for each endpoint in `environment`.
        func rate(for environment: StoreEnvironment) -> Double {
            requestsPerSecond[environment] ?? (environment == .production ? 50 : 5)
        }

        /// The most requests banked for each endpoint in `environment`.
        func burst(for environment: StoreEnvironment) -> Double {
            requestBurst[environment] ?? max(1, rate(for: environment))
        }
    }
}
