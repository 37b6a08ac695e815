extension GroupDecisionService.Configuration {
    /// How the service uses a shared cache: its fetch lock, its count of invalidations, and its
    /// health.
    public struct SharedCache: Sendable, Equatable {
        /// When a shared cache's fetch lock lapses if its holder never releases it.
        ///
        /// Default 10 seconds.
        public var fetchLockTimeToLive: Duration = .seconds(10)
        /// How long a process that finds the fetch lock taken polls for the holder's answer.
        ///
        /// Default 2 seconds. After it, the caller fetches itself (within the budget and the 429
        /// gate) rather than failing: a holder that died costs one extra request, not a failed
        /// decision.
        public var fetchLockWait: Duration = .seconds(2)
        /// How often a waiting process polls the shared cache.
        ///
        /// Default 50 milliseconds.
        public var fetchLockPollInterval: Duration = .milliseconds(50)
        /// With a shared cache that counts invalidations, how recently this process must have read
        /// the count for a copy kept here to be served without reading it again; and how long an
        /// invalidation waits, once the shared cache has forgotten the answers, before it returns.
        ///
        /// Default 250 milliseconds; positive, and at most
        /// ``GroupDecisionService/Configuration/LocalCache/timeToLive`` (unless that is zero, when
        /// nothing is kept here). When an invalidation through any process returns, no process
        /// serves the answers it removed: a copy is served only while the count read less than
        /// this ago, which saw the invalidation, confirms it. It costs each process at most one
        /// read of the count per interval (none while it serves nothing from its copies) and each
        /// invalidation this wait. See the DocC article "Serving decisions at fleet scale", section
        /// "Invalidation across the fleet".
        public var invalidationCheckInterval: Duration = .milliseconds(250)
        /// When a failed or slow shared cache is left alone, and for how long.
        public var health = SharedCacheHealth()

        /// The defaults.
        public init() {}

        /// What is wrong with these settings on their own, or `nil`.
        var problem: String? {
            if fetchLockTimeToLive <= .zero { return "sharedCache.fetchLockTimeToLive must be positive" }
            if fetchLockWait < .zero { return "sharedCache.fetchLockWait must not be negative" }
            if fetchLockPollInterval <= .zero { return "sharedCache.fetchLockPollInterval must be positive" }
            if invalidationCheckInterval <= .zero { return "sharedCache.invalidationCheckInterval must be positive" }
            if let problem = health.problem { return "sharedCache.health.\(problem)" }
            return nil
        }
    }

    /// This process's cache of answers: how long a copy is served before the shared cache is read
    /// again, how much it may hold, and how it is swept.
    public struct LocalCache: Sendable, Equatable {
        /// With a shared cache, the longest this process serves an answer from its own cache
        /// before reading the shared cache again.
        ///
        /// Most hits stay in memory. Default 5 seconds. An invalidation made through any process
        /// stops every process serving its copy before it returns (see
        /// ``GroupDecisionService/Configuration/SharedCache/invalidationCheckInterval``); with a
        /// shared cache that counts no invalidations, or while the shared cache cannot be read,
        /// this is how long a copy may outlive one.
        public var timeToLive: Duration = .seconds(5)
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

        /// What is wrong with these settings on their own, or `nil`.
        var problem: String? {
            if timeToLive < .zero { return "localCache.timeToLive must not be negative" }
            if sweepInterval <= .zero { return "localCache.sweepInterval must be positive" }
            return nil
        }
    }
}
