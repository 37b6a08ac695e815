public import AppStoreGroups
public import Foundation
public import GroupPolicy

/// Where a ``GroupDecisionService`` keeps what several processes must share: Apple's answers per
/// customer, a short lock per customer so one process fetches while the others wait, and the
/// instant before which no request may go to an endpoint after a 429.
///
/// `InMemoryGroupsCache` serves one process; `RedisGroupsCache` serves a fleet. Every key is
/// scoped by the environment (sandbox and production never share an answer), and a store for
/// several apps scopes by app as well (`RedisGroupsCache` takes a key prefix).
///
/// Implementations must be safe to call from any number of tasks, and must bound the time of every
/// call: the service treats an error as "the cache is unavailable" and carries on with its
/// in-process cache (sending Apple nothing beyond the budget the cache granted), never granting
/// anything because of it; a cache whose calls succeed
/// but are consistently slow is left alone the same way (see
/// ``GroupDecisionService/Configuration/sharedCacheSlowCallThreshold``). Error messages may name
/// keys: the service replaces a customer id in them before they reach its observer or its callers.
///
/// Every call of one decision waits for the one before, so over a network each costs a round
/// trip. A decision this process has not cached reads the answer
/// (``answer(anyTransactionID:in:)``); when there is none fresh, it asks for the fetch lock with
/// the answer and generation in one call
/// (``acquireFetchLockAndRead(anyTransactionID:in:owner:timeToLive:)``), then, once the source has
/// answered, writes the answer and releases the lock in one call
/// (``setAnswer(_:releasingFetchLock:)``), besides the rate-limit gate's calls
/// (``rateLimitedUntil(_:in:)`` and, for a fleet budget, ``takeBudgetToken(from:maximumWait:)``).
/// A store across a network should implement those two combined requirements natively, each in one
/// atomic round trip: their default implementations are made of the single calls (three and two
/// round trips) and are correct, only slower. The requirements without a default are the minimum a
/// store implements.
public protocol SharedGroupsCache: Sendable {
    /// The answer kept for a customer, or `nil` when there is none or it has expired.
    ///
    /// - Parameters:
    ///   - customerID: The id the customer's decisions are asked with (any of their transaction
    ///     ids; use the same one everywhere).
    ///   - environment: The environment the answer stands for.
    /// - Returns: The answer, or `nil`.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func answer(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> CachedGroupsAnswer?

    /// Keeps an answer for a customer, replacing any other, for `timeToLive`, whatever the
    /// invalidations since (for tools and tests: the service writes with ``setAnswer(_:)``).
    ///
    /// - Parameters:
    ///   - answer: Apple's answer and when it was fetched.
    ///   - customerID: The id the customer's decisions are asked with.
    ///   - environment: The environment the answer stands for.
    ///   - timeToLive: How long the store keeps it; positive.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot keep it.
    func setAnswer(
        _ answer: CachedGroupsAnswer,
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError)

    /// How many invalidations the customer, and every customer, have seen: read before a fetch
    /// and given back to ``setAnswer(_:)`` in an ``AnswerWrite``.
    ///
    /// - Parameters:
    ///   - customerID: The customer about to be fetched.
    ///   - environment: The environment of the fetch.
    /// - Returns: The generation now.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func invalidationGeneration(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> InvalidationGeneration

    /// Keeps the write's answer for the customer for its time to live, replacing any other, only if
    /// no invalidation (of this customer, of all, or of one of the answer's groups) happened since
    /// its generation was read: checked and written in one atomic step, so an invalidation made by
    /// any process while the answer was being fetched wins.
    ///
    /// The answer is listed under each of its groups for ``invalidate(groupID:)`` for as long as it
    /// is kept.
    ///
    /// - Parameter write: The answer, the customer, the environment, the time to live, the groups
    ///   and the generation read before the fetch began.
    /// - Returns: Whether the answer was kept (`false`: an invalidation came after the generation).
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func setAnswer(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> Bool

    /// Takes the customer's fetch lock when nobody holds it.
    ///
    /// The lock expires by itself after `timeToLive`, so a holder that dies blocks the others for
    /// at most that long.
    ///
    /// - Parameters:
    ///   - customerID: The customer about to be fetched.
    ///   - environment: The environment of the fetch.
    ///   - owner: A value unique to this attempt, needed to release the lock.
    ///   - timeToLive: When the lock expires if it is not released; positive.
    /// - Returns: Whether this caller now holds the lock.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func acquireFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> Bool

    /// Releases the customer's fetch lock if `owner` still holds it; does nothing otherwise.
    ///
    /// - Parameters:
    ///   - customerID: The customer whose lock to release.
    ///   - environment: The environment of the fetch.
    ///   - owner: The value the lock was taken with.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func releaseFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String
    ) async throws(AppStoreGroupsError)

    /// Takes the customer's fetch lock when nobody holds it, and reads, in the same step, the answer
    /// kept for the customer and their invalidation generation: one round trip where
    /// ``acquireFetchLock(anyTransactionID:in:owner:timeToLive:)``,
    /// ``answer(anyTransactionID:in:)`` and ``invalidationGeneration(anyTransactionID:in:)`` take
    /// three.
    ///
    /// The lock behaves as ``acquireFetchLock(anyTransactionID:in:owner:timeToLive:)``'s, and is
    /// also reported taken when `owner` already holds it (a call sent again answers as the first
    /// did). The answer is the one ``answer(anyTransactionID:in:)`` would give, with the same
    /// checks; the generation, the one ``invalidationGeneration(anyTransactionID:in:)`` would give.
    /// Reading them in the same atomic step as the lock is what a store implementing it natively
    /// should do; an answer or generation read a moment earlier is as correct (an earlier
    /// generation only refuses more writes).
    ///
    /// The default implementation makes the three calls (the answer and generation only when the
    /// lock was taken), so a conformer written before it keeps compiling and behaves as before.
    ///
    /// - Parameters:
    ///   - customerID: The customer about to be fetched.
    ///   - environment: The environment of the fetch.
    ///   - owner: A value unique to this attempt, needed to release the lock.
    ///   - timeToLive: When the lock expires if it is not released; positive.
    /// - Returns: Whether the lock was taken, the answer kept, and the generation.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func acquireFetchLockAndRead(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> FetchLockAttempt

    /// Keeps an answer as ``setAnswer(_:)`` does (only if no invalidation came since the write's
    /// generation), and releases the customer's fetch lock if `owner` still holds it, whether the
    /// answer was kept or refused: one round trip where that call and
    /// ``releaseFetchLock(anyTransactionID:in:owner:)`` take two.
    ///
    /// The default implementation makes the two calls, releasing the lock even when the write
    /// fails (then throwing the write's error).
    ///
    /// - Parameters:
    ///   - write: The answer and what decides whether it may be kept (see ``setAnswer(_:)``).
    ///   - owner: The value the fetch lock was taken with.
    /// - Returns: Whether the answer was kept (`false`: an invalidation came after the generation).
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func setAnswer(_ write: AnswerWrite, releasingFetchLock owner: String) async throws(AppStoreGroupsError) -> Bool

    /// The instant before which no request may go to the endpoint, or `nil` when none is set or it
    /// has passed.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - environment: The environment (Apple limits each separately).
    /// - Returns: The instant, or `nil`.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func rateLimitedUntil(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> Date?

    /// Records that no request may go to the endpoint before `instant`, unless a later instant is
    /// already recorded.
    ///
    /// - Parameters:
    ///   - instant: The `Retry-After` instant of a 429.
    ///   - endpoint: The endpoint that answered 429.
    ///   - environment: The environment it answered for.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot keep it.
    func setRateLimitedUntil(
        _ instant: Date,
        for endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError)

    /// Whether this cache keeps the fleet's request budget (``takeBudgetToken(from:maximumWait:)``).
    ///
    /// The default is `false`: the service then keeps a budget per process, the whole configured
    /// rate, and never asks for tokens.
    var keepsFleetBudget: Bool { get }

    /// Takes one token from the fleet's request budget for the endpoint in the environment, a
    /// token bucket kept in the store on the store's clock: the budget's rate of tokens a second,
    /// at most its burst banked, a new bucket starting full.
    ///
    /// When no token is banked the next one is reserved (the balance goes below zero) if it is due
    /// within `maximumWait`; otherwise nothing is taken. Taking and refilling are one atomic step,
    /// so every process sharing the store shares one budget.
    ///
    /// The default implementation answers ``FleetBudgetToken/notSupported`` without asking the
    /// store: a conformer written before fleet budgets keeps compiling, and a service using it
    /// keeps a budget per process.
    ///
    /// - Parameters:
    ///   - budget: The endpoint, the environment, and the fleet's rate and burst.
    ///   - maximumWait: The longest the caller would wait for a reserved token.
    /// - Returns: Whether a token was taken, and the wait.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func takeBudgetToken(
        from budget: FleetBudget,
        maximumWait: Duration
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken

    /// Takes one token from the fleet's request budget for a refresh: only when one is banked now
    /// and at least `reserve` tokens stay banked after, so that customers with no answer keep
    /// the reserve; never reserves a token ahead.
    ///
    /// The bucket is the one ``takeBudgetToken(from:maximumWait:)`` takes from, in the same atomic
    /// step on the store's clock.
    ///
    /// The default implementation asks ``takeBudgetToken(from:maximumWait:)`` with no wait, without
    /// the reserve: a conformer written before refreshes kept a reserve keeps compiling, and its
    /// refreshes take the last banked token like any request (never waiting).
    ///
    /// - Parameters:
    ///   - budget: The endpoint, the environment, and the fleet's rate and burst.
    ///   - reserve: The tokens that must stay banked after this one is taken; at least 0 and less
    ///     than the burst.
    /// - Returns: ``FleetBudgetToken/taken(wait:)`` with no wait, or
    ///   ``FleetBudgetToken/notTaken(wait:)`` with the wait until one could be.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func takeBudgetToken(
        from budget: FleetBudget,
        keeping reserve: Double
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken

    /// Forgets the answers kept for a customer, in every environment, and counts an invalidation
    /// of the customer in each (a write with an earlier generation is refused from then on).
    ///
    /// - Parameter customerID: The id the customer's decisions are asked with.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func invalidate(anyTransactionID customerID: String) async throws(AppStoreGroupsError)

    /// Forgets the answers of every customer whose kept answer holds the group, in every
    /// environment, and counts an invalidation of the group first (an answer holding it, fetched
    /// before, is refused from then on).
    ///
    /// - Parameter groupID: The group's id, as Apple's answers give it.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func invalidate(groupID: String) async throws(AppStoreGroupsError)

    /// Forgets every answer kept (locks and rate-limit instants stay), and counts an invalidation
    /// of every customer first (a write with an earlier generation is refused from then on).
    ///
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func invalidateAll() async throws(AppStoreGroupsError)

    /// How many invalidations (of a customer, a group or everyone) the store has seen, or `nil`
    /// when it does not count them.
    ///
    /// Every invalidation adds one, in the same atomic step that forgets the answers (for
    /// ``invalidateAll()``, once every answer has gone), so a process that reads a count that has
    /// not moved knows that no answer it read since its last reading was invalidated: the decision
    /// service serves its own copies only while the count it read less than
    /// ``GroupDecisionService/Configuration/invalidationCheckInterval`` ago is unchanged.
    ///
    /// Counts are compared for equality only. A store that can lose the count while the processes
    /// live on (a restart without persistence) starts a new count at a random base rather than 0,
    /// so that counting again cannot come back to a value a process remembers, as
    /// `RedisGroupsCache` does.
    ///
    /// The default implementation answers `nil` without asking the store: a conformer written
    /// before the count keeps compiling, and the service then serves its own copies for
    /// ``GroupDecisionService/Configuration/localTimeToLive`` as before.
    ///
    /// - Returns: The count, or `nil` when the store keeps none.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func invalidationCount() async throws(AppStoreGroupsError) -> UInt64?

    /// The answer kept for a customer and the store's invalidation count, read in one atomic step:
    /// one round trip where ``invalidationCount()`` and ``answer(anyTransactionID:in:)`` take two.
    ///
    /// The default implementation reads the count first, then the answer (an answer read after
    /// the count is as correct: an invalidation between the two moves the count the service reads
    /// next).
    ///
    /// - Parameters:
    ///   - customerID: The id the customer's decisions are asked with.
    ///   - environment: The environment the answer stands for.
    /// - Returns: The answer (or `nil`), and the count (or `nil` when the store keeps none).
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func answerAndInvalidationCount(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> (answer: CachedGroupsAnswer?, invalidationCount: UInt64?)
}

extension SharedGroupsCache {
    /// `false`: a cache keeps no fleet budget unless it says so.
    public var keepsFleetBudget: Bool { false }

    /// Answers `nil`: this cache counts no invalidations, and the service serves its own copies
    /// for ``GroupDecisionService/Configuration/localTimeToLive``.
    ///
    /// - Returns: `nil`.
    /// - Throws: Never.
    public func invalidationCount() async throws(AppStoreGroupsError) -> UInt64? {
        nil
    }

    /// Reads ``invalidationCount()``, then ``answer(anyTransactionID:in:)``.
    ///
    /// - Parameters:
    ///   - customerID: The id the customer's decisions are asked with.
    ///   - environment: The environment the answer stands for.
    /// - Returns: The answer and the count.
    /// - Throws: What either call throws.
    public func answerAndInvalidationCount(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> (answer: CachedGroupsAnswer?, invalidationCount: UInt64?) {
        let count = try await invalidationCount()
        return (try await answer(anyTransactionID: customerID, in: environment), count)
    }

    /// Answers ``FleetBudgetToken/notSupported``: this cache keeps no fleet budget, and the
    /// service keeps one per process.
    ///
    /// - Parameters:
    ///   - budget: The budget, unused.
    ///   - maximumWait: The longest the caller would wait, unused.
    /// - Returns: ``FleetBudgetToken/notSupported``.
    /// - Throws: Never.
    public func takeBudgetToken(
        from budget: FleetBudget,
        maximumWait: Duration
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        .notSupported
    }

    /// Asks ``takeBudgetToken(from:maximumWait:)`` with no wait: a token only when one is banked
    /// now, the reserve not kept (a cache written before refreshes kept one).
    ///
    /// - Parameters:
    ///   - budget: The endpoint, the environment, and the fleet's rate and burst.
    ///   - reserve: The tokens to leave banked, unused.
    /// - Returns: What ``takeBudgetToken(from:maximumWait:)`` answers.
    /// - Throws: What it throws.
    public func takeBudgetToken(
        from budget: FleetBudget,
        keeping reserve: Double
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        try await takeBudgetToken(from: budget, maximumWait: .zero)
    }
}
