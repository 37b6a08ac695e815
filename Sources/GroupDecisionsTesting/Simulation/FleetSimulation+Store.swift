public import Foundation
public import GroupDecisions
public import GroupPolicy

extension FleetSimulation {
    /// Which clock a store keeps time on, which decides how the simulation moves its own (see the
    /// article "Simulating a fleet", section "Clocks").
    public struct StoreClock: Sendable, Hashable, CustomStringConvertible {
        /// `simulation` or `wall`.
        public let name: String

        private init(name: String) {
            self.name = name
        }

        /// The store reads the time only through the `now` function ``Store/init(clock:make:)``
        /// hands it: the simulation's clock then moves only when the simulation moves it, as fast
        /// as the steps go, and a run replays most closely.
        public static let simulation = StoreClock(name: "simulation")
        /// The store keeps time on a clock of its own for something (`InMemoryGroupsCache()` the
        /// wall clock; Redis its server's `TIME` for the budget and expiries): the simulation's
        /// clock then follows the wall clock, plus an offset that only grows, so it never runs
        /// slower than real time.
        public static let wall = StoreClock(name: "wall")

        /// The clock's name.
        public var description: String { name }
    }

    /// Where a run's services share their cache: how to make an empty one for each run, which
    /// clock it keeps, and what the simulation may do to it beyond its requirements (flush it,
    /// lose one of its keys, restart it).
    ///
    /// ```swift
    /// let store = FleetSimulation.Store(clock: .simulation) { now in
    ///     FleetSimulation.Store.Instance(cache: MyGroupsCache(keyPrefix: UUID().uuidString, now: now))
    /// }
    /// let violations = try await FleetSimulation(store: store).run(seed: 1)
    /// ```
    public struct Store: Sendable {
        /// One run's store: the concerns every service of the run shares, and the faults it
        /// supports.
        ///
        /// Each fault is optional: the simulation injects only those given (and listed in
        /// ``FleetSimulation/faults``). Each must act on this instance's storage only.
        public struct Instance: Sendable {
            /// The concerns the run's services share (each service through wrappers of the
            /// simulation's own that inject its faults: cut off, slow, flapping).
            ///
            /// A concern left out is one the fleet does without, as each service does (see
            /// `SharedCaches`): the promises are checked as they hold then (without a fleet budget,
            /// the budget promise is the budget times the services). Answers are shared only when
            /// answers, the fetch lock and invalidations come from one store: given by
            /// ``init(cache:makeAnotherInstance:flush:loseBudget:loseInvalidationCount:loseAnswer:restart:close:)``,
            /// or one class instance.
            public var caches: SharedCaches {
                didSet { fromOneStore = false }
            }
            /// Opens another instance over the same storage, as another process of the fleet opens
            /// it, and returns its concerns (the same ones as ``caches``).
            ///
            /// For a network store, a new client on the same server and key prefix: each service
            /// after the first gets its own, so what an instance keeps for itself (a budget, a
            /// count) shows. `nil`: every service shares ``caches``.
            public var makeAnotherInstance: (@Sendable () async throws -> SharedCaches)?
            /// Forgets everything the store holds (`FLUSHALL`): answers, locks, counts, budgets.
            public var flush: (@Sendable () async throws -> Void)?
            /// Forgets the fleet's budget (its bucket's key evicted): the next token comes from a
            /// new bucket.
            public var loseBudget: (@Sendable () async throws -> Void)?
            /// Forgets the invalidation count (its key evicted), and nothing else.
            public var loseInvalidationCount: (@Sendable () async throws -> Void)?
            /// Forgets one customer's answer in one environment (its key evicted).
            public var loseAnswer:
                (@Sendable (_ customerID: String, _ environment: StoreEnvironment) async throws -> Void)?
            /// Restarts the store empty, as a server restarted without persistence: calls fail
            /// while it is down.
            public var restart: (@Sendable () async throws -> Void)?
            /// Called once the run has ended (close connections, stop a server).
            public var close: (@Sendable () async -> Void)?
            /// Whether ``caches`` came whole from one store (`SharedCaches(store)`), until changed.
            var fromOneStore = false

            /// A store instance of the concerns `caches` gives.
            ///
            /// - Parameters:
            ///   - caches: The concerns the run's services share.
            ///   - makeAnotherInstance: Opens another instance over the same storage and returns
            ///     its concerns, or `nil` (the default) for every service to share `caches`.
            ///   - flush: Forgets everything, or `nil` when the store cannot be flushed.
            ///   - loseBudget: Forgets the fleet's budget, or `nil`.
            ///   - loseInvalidationCount: Forgets the invalidation count, or `nil`.
            ///   - loseAnswer: Forgets one answer, or `nil`.
            ///   - restart: Restarts the store empty, or `nil`.
            ///   - close: Called once the run has ended, or `nil`.
            public init(
                caches: SharedCaches,
                makeAnotherInstance: (@Sendable () async throws -> SharedCaches)? = nil,
                flush: (@Sendable () async throws -> Void)? = nil,
                loseBudget: (@Sendable () async throws -> Void)? = nil,
                loseInvalidationCount: (@Sendable () async throws -> Void)? = nil,
                loseAnswer: (@Sendable (_ customerID: String, _ environment: StoreEnvironment) async throws -> Void)? =
                    nil,
                restart: (@Sendable () async throws -> Void)? = nil,
                close: (@Sendable () async -> Void)? = nil
            ) {
                self.caches = caches
                self.makeAnotherInstance = makeAnotherInstance
                self.flush = flush
                self.loseBudget = loseBudget
                self.loseInvalidationCount = loseInvalidationCount
                self.loseAnswer = loseAnswer
                self.restart = restart
                self.close = close
            }

            /// A store instance of a cache that keeps every concern.
            ///
            /// - Parameters:
            ///   - cache: The cache the run's services share.
            ///   - makeAnotherInstance: Opens another instance over the same storage, or `nil` (the
            ///     default) for every service to share `cache`.
            ///   - flush: Forgets everything, or `nil` when the store cannot be flushed.
            ///   - loseBudget: Forgets the fleet's budget, or `nil`.
            ///   - loseInvalidationCount: Forgets the invalidation count, or `nil`.
            ///   - loseAnswer: Forgets one answer, or `nil`.
            ///   - restart: Restarts the store empty, or `nil`.
            ///   - close: Called once the run has ended, or `nil`.
            public init<Cache: SharedGroupsCache>(
                cache: Cache,
                makeAnotherInstance: (@Sendable () async throws -> Cache)? = nil,
                flush: (@Sendable () async throws -> Void)? = nil,
                loseBudget: (@Sendable () async throws -> Void)? = nil,
                loseInvalidationCount: (@Sendable () async throws -> Void)? = nil,
                loseAnswer: (@Sendable (_ customerID: String, _ environment: StoreEnvironment) async throws -> Void)? =
                    nil,
                restart: (@Sendable () async throws -> Void)? = nil,
                close: (@Sendable () async -> Void)? = nil
            ) {
                var another: (@Sendable () async throws -> SharedCaches)?
                if let makeAnotherInstance { another = { SharedCaches(try await makeAnotherInstance()) } }
                self.init(
                    caches: SharedCaches(cache),
                    makeAnotherInstance: another,
                    flush: flush,
                    loseBudget: loseBudget,
                    loseInvalidationCount: loseInvalidationCount,
                    loseAnswer: loseAnswer,
                    restart: restart,
                    close: close
                )
                fromOneStore = true
            }
        }

        /// The clock the store keeps time on.
        public var clock: StoreClock
        /// Makes an empty store for one run, given the simulation's clock.
        public var make: @Sendable (_ now: @escaping @Sendable () -> Date) async throws -> Instance

        /// A store made afresh for each run.
        ///
        /// - Parameters:
        ///   - clock: The clock the store keeps time on: ``StoreClock/simulation`` only when it
        ///     reads the time through `now` and nothing else.
        ///   - make: Makes an empty store (a fresh key prefix is enough) for one run; `now` is the
        ///     simulation's clock, for a store that takes one. Called once per run, before its first
        ///     step.
        public init(
            clock: StoreClock,
            make: @escaping @Sendable (_ now: @escaping @Sendable () -> Date) async throws -> Instance
        ) {
            self.clock = clock
            self.make = make
        }

        /// A cache of your own, made afresh for each run, with no faults beyond what the
        /// simulation's wrappers inject: kept on the wall clock, as the simulation must assume.
        ///
        /// - Parameter makeSharedCache: Returns an empty cache; called once per run.
        /// - Returns: The store.
        public static func cache<Cache: SharedGroupsCache>(
            _ makeSharedCache: @escaping @Sendable () async throws -> Cache
        )
            -> Store
        {
            Store(clock: .wall) { _ in Instance(cache: try await makeSharedCache()) }
        }

        /// `InMemoryGroupsCache` on the simulation's clock, which the simulation can also flush,
        /// restart, and rob of its budget, its invalidation count or an answer.
        ///
        /// An in-memory cache cannot lose a key by itself; this store holds one for the answers,
        /// locks and counts and one for the budget, and loses a key by starting one of them again,
        /// empty. A count it loses starts again at a random value, as the contract asks of a store
        /// that can lose it (see `SharedInvalidations.invalidationCount()`), and so does the
        /// generation's count of everyone's invalidations when a flush or a restart loses the
        /// generations: a write whose generation was read before the loss is refused after it.
        public static var inMemory: Store { inMemory(nil) }

        /// ``inMemory`` whose parts are the concerns `make` starts (the package's tests: a broken
        /// concern that mishandles a lost key), or every concern of `InMemoryGroupsCache` for `nil`.
        package static func inMemory(
            _ make: (@Sendable (_ now: @escaping @Sendable () -> Date) -> SharedCaches)?
        ) -> Store {
            Store(clock: .simulation) { now in
                let store = LosableInMemoryStore(now: now, make: make)
                return Instance(
                    caches: store.concerns,
                    flush: { store.flush(restarting: false) },
                    loseBudget: { store.loseBudget() },
                    loseInvalidationCount: { store.loseInvalidationCount() },
                    loseAnswer: { customerID, environment in
                        try await store.loseAnswer(customerID: customerID, in: environment)
                    },
                    restart: { store.flush(restarting: true) }
                )
            }
        }
    }

    /// A fault the simulation may inject; ``FleetSimulation/faults`` lists those it does.
    public struct Fault: Sendable, Hashable, CustomStringConvertible {
        /// The fault's name, such as `cut-off`.
        public let name: String

        private init(name: String) {
            self.name = name
        }

        /// One service cut off from the store, while the others reach it: every call fails, at
        /// once or after a timeout.
        public static let cutOff = Fault(name: "cut-off")
        /// One service's calls to the store each take 200 milliseconds.
        public static let slowCache = Fault(name: "slow-cache")
        /// One service's calls to the store fail half the time, before the store acted or after
        /// (the reply lost).
        public static let flappingCache = Fault(name: "flapping-cache")
        /// The store flushed (``Store/Instance/flush``).
        public static let flush = Fault(name: "flush")
        /// One key of the store evicted: the budget's, the invalidation count's or an answer's.
        public static let evictedKey = Fault(name: "evicted-key")
        /// The store restarted empty (``Store/Instance/restart``).
        public static let restart = Fault(name: "restart")
        /// Apple answering a third of the requests 429 for a while, with a `Retry-After` up to two
        /// seconds ahead.
        public static let rateLimitStorm = Fault(name: "rate-limit-storm")
        /// Apple answering half the requests slowly for a while (up to three seconds).
        public static let slowAnswers = Fault(name: "slow-answers")
        /// Apple dropping a third of the connections for a while, after up to a second.
        public static let droppedAnswers = Fault(name: "dropped-answers")

        /// Every fault.
        public static let all: Set<Fault> = [
            .cutOff, .slowCache, .flappingCache, .flush, .evictedKey, .restart, .rateLimitStorm, .slowAnswers,
            .droppedAnswers,
        ]

        /// The fault's name.
        public var description: String { name }
    }

    /// How the simulated App Store behaves: Apple's budget, and what it does at all times beyond
    /// the faults the script turns on and off.
    public struct AppStore: Sendable, Hashable {
        /// Apple's budget, requests a second per environment (a burst of one second's worth).
        ///
        /// Beyond it the simulated App Store answers 429 with a `Retry-After` naming when its next
        /// token is due. `nil` (the default): twice the services' budget (rate and burst), so that a
        /// fleet spending more than its budget is seen by the budget promise rather than held back
        /// by Apple's first 429.
        public var requestsPerSecond: [StoreEnvironment: Double]?
        /// The share of requests answered 429 at any time, storm or not.
        ///
        /// Default 0.
        public var rateLimitedShare: Double = 0
        /// The share of requests whose connection is dropped at any time.
        ///
        /// Default 0.
        public var droppedShare: Double = 0
        /// The share of requests answered slowly (up to three seconds) at any time.
        ///
        /// Default 0.1.
        public var slowShare: Double = 0.1

        /// Apple's budget twice the services', and one answer in ten slow.
        public init() {}
    }
}
