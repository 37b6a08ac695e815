import AppStoreGroups
import Foundation
public import GroupDecisions
import GroupPolicy

/// The checks every `SharedGroupsCache` must pass for `GroupDecisionService` to keep its
/// guarantees: the in-memory cache, `RedisGroupsCache` and any cache of your own run the same ones.
///
/// It depends on no test framework: call ``run()`` from a Swift Testing or XCTest test, against a
/// real instance of your store that the test starts, and a failure throws a
/// ``ConformanceFailure`` naming the check, the requirement, the value expected and the value found.
///
/// ```swift
/// @Test func conformsToTheSharedCacheContract() async throws {
///     let server = try await startMyStore()
///     let conformance = SharedGroupsCacheConformance(
///         makeSecondInstance: { MyGroupsCache(address: server.address, keyPrefix: ($0 as! MyGroupsCache).keyPrefix) }
///     ) {
///         MyGroupsCache(address: server.address, keyPrefix: UUID().uuidString)  // empty each time
///     }
///     try await conformance.run()
/// }
/// ```
///
/// Each check gets a cache of its own from `makeCache`, which must return an empty cache (a fresh
/// key prefix is enough). Every requirement of the four protocols is called, from two instances
/// over one storage, at stale generations as well as current ones, with customer ids that differ
/// only in case or Unicode normalisation, and ends with ``Check/operationSequences``: seeded
/// random sequences of operations from both instances, checked step by step against a model of
/// the contract. The `GroupDecisionsTesting` article "Proving a shared cache" lists every check.
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
        /// Answers round-trip through both reads (`answer` and `answerAndInvalidationCount`) and
        /// both instances, per customer and environment, replace each other, and expire after their
        /// time to live; a customer with no answer reads none, whatever others hold.
        case answers
        /// A write is kept only when no invalidation of the customer (in any environment), of
        /// everyone or of one of its groups came after the generation it was read at, through the
        /// lock-free `setAnswer(_:)` and the combined call alike, at stale generations and current
        /// ones; the combined calls release the fetch lock whether the write was kept or refused.
        case conditionalWrites
        /// One holder per customer and environment, seen from both instances; released only by its
        /// owner; taken again by its owner through a native combined call; expired after its time to
        /// live.
        case fetchLock
        /// The latest `Retry-After` instant per endpoint and environment is kept, never read back
        /// earlier than set, and reads as none once it has passed.
        case rateLimits
        /// A cache that keeps the fleet's budget hands out its burst across two instances over the
        /// same storage, then no more at once; a token reserved ahead comes with its wait, and only
        /// within the caller's maximum; a new bucket starts with the budget's `initialTokens`; each
        /// endpoint and environment has a budget of its own. A cache that keeps none says so from both
        /// token calls.
        case fleetBudget
        /// The budget refills at its rate, measured on the suite's clock (or, without one, against
        /// the real time the suite measured around its calls), no faster and not never.
        case budgetRefill
        /// `takeBudgetToken(from:keeping:)` takes a token only when the reserve stays banked after
        /// it, never reserves one ahead, and shares its bucket with `takeBudgetToken(from:maximumWait:)`.
        case refreshTokens
        /// The invalidation count, compared for equality only: both reads and both instances give
        /// the same count while nothing is invalidated, every invalidation changes it to a value
        /// never read before, and a store that keeps none answers `nil` from every reading.
        case invalidationCount
        /// Every invalidation removes the answers it names, in both environments, and no other:
        /// a customer's, the customers holding a group, and everyone's.
        case invalidations
        /// Customer ids that differ only in case or Unicode normalisation are distinct customers
        /// byte for byte (answers, locks, invalidations), and so are group ids that differ in case.
        case identifiers
        /// Seeded random sequences of every operation from both instances, each step checked against
        /// a model of the contract (see ``seeds``).
        case operationSequences
    }

    /// Where the caches come from, and whose clock they run on.
    enum Source: Sendable {
        /// Caches on their own clock: the suite waits in real time.
        case ownClock(@Sendable () async throws -> any SharedGroupsCache)
        /// Caches on a clock the suite moves.
        case suiteClock(@Sendable (ManualClock) async throws -> any SharedGroupsCache)
    }

    let source: Source
    let makeSecondInstance: (@Sendable (any SharedGroupsCache) async throws -> any SharedGroupsCache)?
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
    public init(
        readsWhenFetchLockTaken: Bool = true,
        makeSecondInstance: (@Sendable (any SharedGroupsCache) async throws -> any SharedGroupsCache)? = nil,
        makeCache: @escaping @Sendable () async throws -> any SharedGroupsCache
    ) {
        self.readsWhenFetchLockTaken = readsWhenFetchLockTaken
        self.makeSecondInstance = makeSecondInstance
        self.source = .ownClock(makeCache)
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
    public init(
        readsWhenFetchLockTaken: Bool = true,
        makeSecondInstance: (@Sendable (any SharedGroupsCache) async throws -> any SharedGroupsCache)? = nil,
        makeCache: @escaping @Sendable (ManualClock) async throws -> any SharedGroupsCache
    ) {
        self.readsWhenFetchLockTaken = readsWhenFetchLockTaken
        self.makeSecondInstance = makeSecondInstance
        self.source = .suiteClock(makeCache)
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

    /// A cache, its second instance when one can be opened, and the clock they run on.
    func makeSubject() async throws -> ConformanceSubject {
        switch source {
        case .ownClock(let makeCache):
            let cache = try await makeCache()
            return ConformanceSubject(first: cache, second: try await makeSecondInstance?(cache), clock: nil)
        case .suiteClock(let makeCache):
            let clock = ManualClock()
            let cache = try await makeCache(clock)
            return ConformanceSubject(first: cache, second: try await makeSecondInstance?(cache), clock: clock)
        }
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

    package static func acquire(_ cache: any SharedGroupsCache, _ owner: String) async throws -> FetchLockAttempt {
        try await cache.acquireFetchLockAndRead(
            anyTransactionID: "c1",
            in: .sandbox,
            owner: owner,
            timeToLive: lockLifetime
        )
    }

    package static func write(
        _ cache: any SharedGroupsCache,
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
