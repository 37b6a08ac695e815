import AppStoreGroups
import Foundation
public import GroupDecisions
import GroupPolicy

/// The checks every shared cache must pass for `GroupDecisionService` to keep its guarantees: the
/// in-memory cache, `RedisGroupsCache` and any cache of your own run the same ones.
///
/// It depends on no test framework: call ``run()`` from a Swift Testing or XCTest test, against a
/// real instance of your store that the test starts, and a failure throws a
/// ``ConformanceFailure`` naming the check, the requirement, the value expected and the value found.
///
/// ```swift
/// @Test func conformsToTheSharedCacheContract() async throws {
///     let server = try await startMyStore()
///     let conformance = SharedGroupsCacheConformance(
///         makeSecondInstance: { MyGroupsCache(address: server.address, keyPrefix: $0.keyPrefix) }
///     ) {
///         MyGroupsCache(address: server.address, keyPrefix: UUID().uuidString)  // empty each time
///     }
///     try await conformance.run()
/// }
/// ```
///
/// Each check gets a cache of its own from `makeCache`, which must return an empty cache (a fresh
/// key prefix is enough). Every requirement of the five protocols is called, from two instances
/// over one storage, at stale generations as well as current ones, with customer ids that differ
/// only in case or Unicode normalisation, and ends with ``Check/operationSequences``: seeded
/// random sequences of operations from both instances, checked step by step against a model of
/// the contract. The `GroupDecisionsTesting` article "Proving a shared cache" lists every check.
///
/// **A store of some concerns.** Each check belongs to one concern of `SharedCaches` (answers,
/// the fetch lock, rate limits, the fleet budget, invalidations) and runs when the store provides
/// it; the parts of a check that need two concerns together (an invalidation that removes an
/// answer, a write that releases the lock) run when both are there. A store that keeps some of
/// them says which through the initializers that take `concerns`, and is checked for those only.
///
/// **Time.** Give the suite the cache's clock when the cache can take one: with the initializer
/// whose `makeCache` takes a ``ManualClock``, the suite hands each cache a clock and moves it, so
/// expiry and the budget's refill are checked exactly and without waiting; the cache must measure
/// all of its time on it (answers' and locks' expiry, `Retry-After` instants, the budget's refill). A store with a clock of its own
/// (Redis's) takes the initializer without a clock: the suite then waits in real time, polling
/// for expiry for up to ten seconds and bounding the budget's refill by the time it measured
/// around its calls, with margins no busy machine can break.
///
/// **A second instance.** `makeSecondInstance` opens another instance over the same storage as a
/// second process of the fleet would (for a network store, a new client on the same server and key
/// prefix; for a store held in the process, the instance itself). With it, every check spreads
/// its calls over both instances. Without it (`nil`), the checks use one instance and cannot see
/// sharing, so the two promises made to the fleet fail when the cache makes them: the
/// ``Check/fleetBudget`` check of a cache that keeps the fleet's budget, and the
/// ``Check/invalidationCount`` check of a cache that counts invalidations.
public struct SharedGroupsCacheConformance: Sendable {
    /// One requirement of the contract, checked by ``run(_:)``, in the order ``run()`` runs them.
    public enum Check: String, Sendable, CaseIterable {
        /// Answers round-trip through both reads (`answer`, and `answerAndInvalidationCount` when the
        /// store provides invalidations too) and both instances, per customer and environment,
        /// replace each other, and expire after their time to live; a customer with no answer reads
        /// none, whatever others hold.
        case answers
        /// Answers with invalidations: a write is kept only when no invalidation of the customer (in any environment), of
        /// everyone or of one of its groups came after the generation it was read at, through the
        /// lock-free `setAnswer(_:)` and the combined call alike, at stale generations and current
        /// ones; with the fetch lock too, the combined calls release it whether the write was kept or
        /// refused.
        case conditionalWrites
        /// The fetch lock: one holder per customer and environment, seen from both instances; released only by its
        /// owner; taken again by its owner through a native combined call; expired after its time to
        /// live.
        case fetchLock
        /// Rate limits: the latest `Retry-After` instant per endpoint and environment is kept, never read back
        /// earlier than set, and reads as none once it has passed.
        case rateLimits
        /// The fleet budget: hands out its burst across two instances over the
        /// same storage, then no more at once; a token reserved ahead comes with its wait, and only
        /// within the caller's maximum; a new bucket starts with the budget's `initialTokens`; each
        /// endpoint and environment has a budget of its own.
        case fleetBudget
        /// The fleet budget refills at its rate, measured on the suite's clock (or, without one, against
        /// the real time the suite measured around its calls), no faster and not never.
        case budgetRefill
        /// The fleet budget's `takeBudgetToken(from:keeping:)` takes a token only when the reserve stays banked after
        /// it, never reserves one ahead, and shares its bucket with `takeBudgetToken(from:maximumWait:)`.
        case refreshTokens
        /// Invalidations' count, compared for equality only: both reads and both instances give
        /// the same count while nothing is invalidated, every invalidation changes it to a value
        /// never read before, and a store that keeps none answers `nil` from every reading.
        case invalidationCount
        /// Answers with invalidations: every invalidation removes the answers it names, in both environments, and no other:
        /// a customer's, the customers holding a group, and everyone's.
        case invalidations
        /// Customer ids that differ only in case or Unicode normalisation are distinct customers
        /// byte for byte, in each concern the store provides (answers, locks, invalidations), and
        /// group ids that differ in case are distinct groups (answers with invalidations).
        case identifiers
        /// Seeded random sequences of every operation of the concerns provided, from both instances, each step checked against
        /// a model of the contract (see ``seeds``).
        case operationSequences
    }

    /// Makes a subject: the store's concerns and its second instance's, on the clock given when
    /// the suite moves it (`nil`: their own).
    private let subjects: @Sendable (_ clock: ManualClock?) async throws -> ConformanceSubject
    /// Whether the caches run on a clock the suite moves.
    private let onSuiteClock: Bool
    let readsWhenFetchLockTaken: Bool

    /// The seeds of the sequences ``Check/operationSequences`` runs, one cache each.
    ///
    /// Default ``defaultSeeds``: the same sequences on every run; add seeds of your own to explore
    /// more.
    public var seeds: [UInt64] = Self.defaultSeeds

    /// How many operations each sequence makes.
    ///
    /// Default 160, and a few reads more: each invalidation is followed by reads of answers it
    /// may have removed, and each sequence ends by reading every answer and the count.
    public var operationsPerSequence = 160

    /// The seeds ``seeds`` starts with: 1 to 24.
    public static let defaultSeeds = Array(UInt64(1)...24)

    /// A suite over caches on their own clock, which `makeCache` returns.
    ///
    /// The suite measures time in real time: it polls for expiry (for up to ten seconds) and bounds
    /// the budget's refill by the time it measured around its calls. Use it for a store with a
    /// clock of its own, as Redis's.
    ///
    /// - Parameters:
    ///   - readsWhenFetchLockTaken: Whether the cache makes `acquireFetchLockAndRead` natively: it then
    ///     reads the answer and generation when another process holds the lock, and reports the lock
    ///     taken to the owner that holds it. `false` for a cache that makes it of single calls
    ///     (take the lock, then read), which reads nothing then and answers the lock held to its
    ///     owner. Default `true`.
    ///   - makeSecondInstance: Opens another instance over the storage of the cache it is given, as
    ///     a second process of the fleet would, or `nil` when none can be opened (see the type's
    ///     discussion). Default `nil`.
    ///   - makeCache: Returns an empty cache; called once per check and per sequence.
    public init<Cache: SharedGroupsCache>(
        readsWhenFetchLockTaken: Bool = true,
        makeSecondInstance: (@Sendable (Cache) async throws -> Cache)? = nil,
        makeCache: @escaping @Sendable () async throws -> Cache
    ) {
        self.init(
            readsWhenFetchLockTaken: readsWhenFetchLockTaken,
            concerns: { SharedCaches($0) },
            makeSecondInstance: makeSecondInstance,
            makeStore: makeCache
        )
    }

    /// A suite over caches on a clock the suite moves: `makeCache` gets the clock and returns an
    /// empty cache that measures all of its time on it.
    ///
    /// Expiry and the budget's refill are then checked exactly, without waiting:
    ///
    /// ```swift
    /// try await SharedGroupsCacheConformance(makeSecondInstance: { $0 }) { clock in
    ///     InMemoryGroupsCache(now: clock.now)
    /// }
    /// .run()
    /// ```
    ///
    /// - Parameters:
    ///   - readsWhenFetchLockTaken: Whether the cache reads the answer and generation when another
    ///     process holds the fetch lock. Default `true`.
    ///   - makeSecondInstance: Opens another instance over the storage (and on the clock) of the
    ///     cache it is given, or `nil` when none can be opened. Default `nil`.
    ///   - makeCache: Returns an empty cache on the clock it is given; called once per check and
    ///     per sequence, each time with a clock of its own.
    public init<Cache: SharedGroupsCache>(
        readsWhenFetchLockTaken: Bool = true,
        makeSecondInstance: (@Sendable (Cache) async throws -> Cache)? = nil,
        makeCache: @escaping @Sendable (ManualClock) async throws -> Cache
    ) {
        self.init(
            readsWhenFetchLockTaken: readsWhenFetchLockTaken,
            concerns: { SharedCaches($0) },
            makeSecondInstance: makeSecondInstance,
            makeStore: makeCache
        )
    }

    /// A suite over the concerns a store provides, on the store's own clock: each check runs when
    /// the store provides the concerns it needs, and the others are not run.
    ///
    /// For a store that keeps some of the concerns, such as a fleet budget alone:
    ///
    /// ```swift
    /// try await SharedGroupsCacheConformance(concerns: { SharedCaches(fleetBudget: $0) }) {
    ///     MyFleetBudget(address: server.address, keyPrefix: UUID().uuidString)
    /// }
    /// .run()
    /// ```
    ///
    /// - Parameters:
    ///   - readsWhenFetchLockTaken: Whether the store's fetch lock reads the answer and generation
    ///     when another process holds it. Default `true`.
    ///   - concerns: The concerns of a store to check (`{ (store: MyStore) in SharedCaches(answers:
    ///     store, invalidations: store) }` for a store that keeps answers and invalidations).
    ///   - makeSecondInstance: Opens another instance over the storage of the store it is given, or
    ///     `nil` when none can be opened. Default `nil`.
    ///   - makeStore: Returns an empty store; called once per check and per sequence.
    public init<Store: Sendable>(
        readsWhenFetchLockTaken: Bool = true,
        concerns: @escaping @Sendable (Store) -> SharedCaches,
        makeSecondInstance: (@Sendable (Store) async throws -> Store)? = nil,
        makeStore: @escaping @Sendable () async throws -> Store
    ) {
        self.readsWhenFetchLockTaken = readsWhenFetchLockTaken
        onSuiteClock = false
        subjects = { _ in
            let store = try await makeStore()
            let second = try await makeSecondInstance?(store)
            return ConformanceSubject(first: concerns(store), second: second.map(concerns), clock: nil)
        }
    }

    /// A suite over the concerns a store provides, on a clock the suite moves: `makeStore` gets the
    /// clock and returns an empty store that measures all of its time on it.
    ///
    /// - Parameters:
    ///   - readsWhenFetchLockTaken: Whether the store's fetch lock reads the answer and generation
    ///     when another process holds it. Default `true`.
    ///   - concerns: The concerns of a store to check.
    ///   - makeSecondInstance: Opens another instance over the storage (and on the clock) of the
    ///     store it is given, or `nil` when none can be opened. Default `nil`.
    ///   - makeStore: Returns an empty store on the clock it is given; called once per check and per
    ///     sequence, each time with a clock of its own.
    public init<Store: Sendable>(
        readsWhenFetchLockTaken: Bool = true,
        concerns: @escaping @Sendable (Store) -> SharedCaches,
        makeSecondInstance: (@Sendable (Store) async throws -> Store)? = nil,
        makeStore: @escaping @Sendable (ManualClock) async throws -> Store
    ) {
        self.readsWhenFetchLockTaken = readsWhenFetchLockTaken
        onSuiteClock = true
        subjects = { clock in
            let clock = clock ?? ManualClock()
            let store = try await makeStore(clock)
            let second = try await makeSecondInstance?(store)
            return ConformanceSubject(first: concerns(store), second: second.map(concerns), clock: clock)
        }
    }

    /// Runs every check, in the order of ``Check``, each on a cache of its own, and throws at the
    /// first failure.
    ///
    /// - Throws: ``ConformanceFailure``, or what the cache throws.
    public func run() async throws {
        for check in Check.allCases { try await run(check) }
    }

    /// Runs one check on a cache of its own (one per seed for ``Check/operationSequences``).
    ///
    /// - Parameter check: The requirement to check.
    /// - Throws: ``ConformanceFailure``, or what the cache throws.
    public func run(_ check: Check) async throws {
        if check == .operationSequences {
            for seed in seeds { try await runOperationSequence(seed: seed) }
            return
        }
        let subject = try await makeSubject()
        switch check {
        case .answers: try await checkAnswers(subject)
        case .identifiers: try await checkIdentifiers(subject)
        case .conditionalWrites: try await checkConditionalWrites(subject)
        case .fetchLock: try await checkFetchLock(subject)
        case .rateLimits: try await checkRateLimits(subject)
        case .fleetBudget: try await checkFleetBudget(subject)
        case .budgetRefill: try await checkBudgetRefill(subject)
        case .refreshTokens: try await checkRefreshTokens(subject)
        case .invalidationCount: try await checkInvalidationCount(subject)
        case .invalidations: try await checkInvalidations(subject)
        case .operationSequences: break
        }
    }

    /// Runs the operation sequence `seed` makes on a cache of its own: what a failure of
    /// ``Check/operationSequences`` names, to replay it.
    ///
    /// The same seed makes the same operations; on the suite's clock the same cache answers the
    /// same way, on its own clock only the budget's refill may differ between runs.
    ///
    /// - Parameter seed: The sequence's seed.
    /// - Throws: ``ConformanceFailure``, or what the cache throws.
    public func runOperationSequence(seed: UInt64) async throws {
        let subject = try await makeSubject()
        var sequence = OperationSequence(
            subject: subject,
            seed: seed,
            readsWhenFetchLockTaken: readsWhenFetchLockTaken
        )
        try await sequence.run(operations: operationsPerSequence)
    }

    /// A store's concerns, its second instance's when one can be opened, and the clock they run on.
    func makeSubject() async throws -> ConformanceSubject {
        try await subjects(onSuiteClock ? ManualClock() : nil)
    }

    /// A lock long enough that none expires while a busy machine runs a check.
    package static let lockLifetime = Duration.seconds(3_600)

    /// An answer holding `group`, fetched a second ago, in whole milliseconds (what a cache keeps).
    package static func answer(_ group: String) -> CachedGroupsAnswer {
        ConformanceValues.answer(holding: [group], fetchedAt: ConformanceValues.wholeMilliseconds(Date()) - 1_000)
    }

    package static func generation(_ customer: UInt64, _ all: UInt64, _ groups: UInt64) -> InvalidationGeneration {
        InvalidationGeneration(customer: customer, all: all, groups: groups)
    }

    package static func acquire(_ cache: any SharedFetchLock, _ owner: String) async throws -> FetchLockAttempt {
        try await cache.acquireFetchLockAndRead(
            anyTransactionID: "c1",
            in: .sandbox,
            owner: owner,
            timeToLive: lockLifetime
        )
    }

    package static func write(
        _ cache: any SharedFetchLock,
        _ answer: CachedGroupsAnswer,
        groups: [String],
        at generation: InvalidationGeneration,
        releasing owner: String
    ) async throws -> Bool {
        let write = AnswerWrite(
            answer,
            anyTransactionID: "c1",
            in: .sandbox,
            timeToLive: .seconds(3600),
            groupIDs: groups,
            ifGeneration: generation
        )
        return try await cache.setAnswer(write, releasingFetchLock: owner)
    }
}
