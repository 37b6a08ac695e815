public import AppStoreGroups
public import Foundation
public import GroupDecisions
public import GroupPolicy
import GroupPolicyBasics

/// A `SharedGroupsCache` in this process's memory: what several `GroupDecisionService`s in one
/// process share, and what an app's tests give two services to act as two processes of a fleet
/// without a Redis.
///
/// Answers are bounded in bytes, the least recently used evicted first; an answer's cost is what it
/// holds on the heap (Apple's bytes and the customer id) plus 1,024 bytes for its bookkeeping and the
/// pages its allocations pin, and one costing more than the whole capacity is not kept. Fetch locks
/// and `Retry-After` instants expire on the clock it is given.
///
/// A decision service does not need one: it keeps its own cache in the process.
public final class InMemoryGroupsCache: SharedGroupsCache {
    /// The default capacity, 64 MiB.
    public static let defaultCapacityBytes = 64 << 20

    /// The most bytes the answers may cost together.
    public var capacityBytes: Int { answers.capacityBytes }

    private let answers: LocalGroupsCache
    private let locks = Locked<[CustomerKey: (owner: String, expires: Date)]>([:])
    private let rateLimits = Locked<[EndpointKey: Date]>([:])
    private let budgets = Locked<[EndpointKey: TokenBucket]>([:])
    private let generations = Locked(Generations())

    /// The invalidation counts: one per customer or group invalidated, bounded by forgetting them all and
    /// counting an invalidation of everyone instead, which refuses every write in flight (safe: it
    /// costs a fetch, never keeps an answer an invalidation should have removed).
    private struct Generations {
        static let maximumCustomers = 100_000
        var customers: [CustomerKey: UInt64] = [:]
        var all: UInt64 = 0
        /// The group count when each group was last invalidated.
        var groups: [String: UInt64] = [:]
        var groupCount: UInt64 = 0
        /// Every invalidation, of a customer, a group or everyone.
        var invalidations: UInt64 = 0

        func generation(_ key: CustomerKey) -> InvalidationGeneration {
            InvalidationGeneration(customer: customers[key] ?? 0, all: all, groups: groupCount)
        }

        /// Whether an answer holding these groups, fetched at `generation`, may be kept.
        func admits(_ key: CustomerKey, groupIDs: [String], at generation: InvalidationGeneration) -> Bool {
            guard self.generation(key).customer == generation.customer, all == generation.all else { return false }
            return groupIDs.allSatisfy { (groups[$0] ?? 0) <= generation.groups }
        }

        /// Makes room for `count` more counts: past the bound, every count is forgotten and one
        /// invalidation of everyone is counted instead.
        mutating func makeRoom(_ count: Int) {
            guard customers.count + groups.count + count > Self.maximumCustomers else { return }
            customers.removeAll()
            groups.removeAll()
            all += 1
        }
    }
    private let now: @Sendable () -> Date

    /// Creates an empty cache.
    ///
    /// - Parameters:
    ///   - capacityBytes: The most bytes the answers may cost together. Default
    ///     ``defaultCapacityBytes``.
    ///   - now: The wall clock expiry is measured with. Default: the system clock.
    public init(capacityBytes: Int = defaultCapacityBytes, now: @escaping @Sendable () -> Date = { Date() }) {
        self.answers = LocalGroupsCache(capacityBytes: capacityBytes)
        self.now = now
    }

    /// How many answers the cache holds, expired ones not yet evicted included.
    public var count: Int { answers.count }

    /// What the answers held cost together, in bytes (see the type's discussion).
    public var costBytes: Int { answers.costBytes }

    /// The answer kept for a customer, or `nil` when there is none or it has expired.
    ///
    /// - Parameters:
    ///   - customerID: The id the customer's decisions are asked with.
    ///   - environment: The environment the answer stands for.
    /// - Returns: The answer, or `nil`.
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func answer(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> CachedGroupsAnswer? {
        answers.entry(CustomerKey(environment: environment, customerID: customerID), now: now())?.answer
    }

    /// Keeps an answer for a customer for `timeToLive`, evicting the least recently used answers
    /// when the cache would be over capacity.
    ///
    /// - Parameters:
    ///   - answer: Apple's answer and when it was fetched.
    ///   - customerID: The id the customer's decisions are asked with.
    ///   - environment: The environment the answer stands for.
    ///   - timeToLive: How long to keep it.
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func setAnswer(
        _ answer: CachedGroupsAnswer,
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) {
        let key = CustomerKey(environment: environment, customerID: customerID)
        guard timeToLive > .zero else { return answers.remove(key) }
        answers.set(LocalGroupsCache.Entry(answer: answer), for: key, expires: now() + timeToLive.seconds)
    }

    /// How many invalidations the customer, and every customer, have seen.
    ///
    /// - Parameters:
    ///   - customerID: The customer about to be fetched.
    ///   - environment: The environment of the fetch.
    /// - Returns: The generation now.
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func invalidationGeneration(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> InvalidationGeneration {
        let key = CustomerKey(environment: environment, customerID: customerID)
        return generations.withLock { $0.generation(key) }
    }

    /// Keeps the write's answer for its time to live only if no invalidation of the customer, of
    /// everyone or of one of its groups happened since its generation was read (checked and written
    /// under one lock).
    ///
    /// - Parameter write: The answer and what decides whether it may be kept.
    /// - Returns: Whether the answer was kept.
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func setAnswer(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> Bool {
        keep(write, releasingFetchLock: nil)
    }

    /// Takes the customer's fetch lock when nobody holds it or the holder's has expired.
    ///
    /// - Parameters:
    ///   - customerID: The customer about to be fetched.
    ///   - environment: The environment of the fetch.
    ///   - owner: A value unique to this attempt.
    ///   - timeToLive: When the lock expires if it is not released.
    /// - Returns: Whether this caller now holds the lock.
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func acquireFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> Bool {
        let key = CustomerKey(environment: environment, customerID: customerID)
        let now = now()
        return locks.withLock { locks in
            if let lock = locks[key], now < lock.expires { return false }
            locks[key] = (owner, now + timeToLive.seconds)
            return true
        }
    }

    /// Releases the customer's fetch lock if `owner` still holds it.
    ///
    /// - Parameters:
    ///   - customerID: The customer whose lock to release.
    ///   - environment: The environment of the fetch.
    ///   - owner: The value the lock was taken with.
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func releaseFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String
    ) async throws(AppStoreGroupsError) {
        release(CustomerKey(environment: environment, customerID: customerID), owner: owner)
    }

    private func release(_ key: CustomerKey, owner: String) {
        locks.withLock { locks in
            if locks[key]?.owner == owner { locks[key] = nil }
        }
    }

    /// Takes the customer's fetch lock when nobody else holds it (or the holder's has expired), and
    /// reads the answer and the invalidation generation, all under one lock.
    ///
    /// - Parameters:
    ///   - customerID: The customer about to be fetched.
    ///   - environment: The environment of the fetch.
    ///   - owner: A value unique to this attempt (the lock is reported taken when it already holds
    ///     it).
    ///   - timeToLive: When the lock expires if it is not released.
    /// - Returns: Whether this caller now holds the lock, the answer kept, and the generation.
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func acquireFetchLockAndRead(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> FetchLockAttempt {
        let key = CustomerKey(environment: environment, customerID: customerID)
        let now = now()
        return generations.withLock { generations in
            let acquired = locks.withLock { locks in
                if let lock = locks[key], now < lock.expires, lock.owner != owner { return false }
                locks[key] = (owner, now + timeToLive.seconds)
                return true
            }
            return FetchLockAttempt(
                acquired: acquired,
                answer: answers.entry(key, now: now)?.answer,
                generation: generations.generation(key)
            )
        }
    }

    /// Keeps an answer as ``setAnswer(_:)`` does and releases the customer's fetch lock if `owner`
    /// still holds it, kept or refused, under one lock.
    ///
    /// - Parameters:
    ///   - write: The answer and what decides whether it may be kept.
    ///   - owner: The value the fetch lock was taken with.
    /// - Returns: Whether the answer was kept.
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func setAnswer(
        _ write: AnswerWrite,
        releasingFetchLock owner: String
    ) async throws(AppStoreGroupsError) -> Bool {
        keep(write, releasingFetchLock: owner)
    }

    /// Under the generations' lock: releases `owner`'s fetch lock (when given), then keeps the
    /// answer if its generation still admits it.
    private func keep(_ write: AnswerWrite, releasingFetchLock owner: String?) -> Bool {
        let key = CustomerKey(environment: write.environment, customerID: write.customerID)
        let expires = now() + write.timeToLive.seconds
        return generations.withLock { generations in
            if let owner { release(key, owner: owner) }
            guard generations.admits(key, groupIDs: write.groupIDs, at: write.generation) else { return false }
            if write.timeToLive > .zero {
                answers.set(LocalGroupsCache.Entry(answer: write.answer), for: key, expires: expires)
            } else {
                answers.remove(key)
            }
            return true
        }
    }

    /// The instant before which no request may go to the endpoint, or `nil`.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - environment: The environment.
    /// - Returns: The instant, or `nil` when none is set or it has passed.
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func rateLimitedUntil(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> Date? {
        let key = EndpointKey(environment: environment, endpoint: endpoint)
        let now = now()
        return rateLimits.withLock { instants in
            guard let instant = instants[key] else { return nil }
            guard now < instant else {
                instants[key] = nil
                return nil
            }
            return instant
        }
    }

    /// Records that no request may go to the endpoint before `instant`, unless a later instant is
    /// already recorded.
    ///
    /// - Parameters:
    ///   - instant: The `Retry-After` instant.
    ///   - endpoint: The endpoint that answered 429.
    ///   - environment: The environment it answered for.
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func setRateLimitedUntil(
        _ instant: Date,
        for endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) {
        let key = EndpointKey(environment: environment, endpoint: endpoint)
        rateLimits.withLock { instants in
            if let known = instants[key], known >= instant { return }
            instants[key] = instant
        }
    }

    /// Takes one token from the budget every service sharing this cache shares, for the endpoint
    /// in the environment, on the clock this cache was given.
    ///
    /// A new bucket (or one whose rate or burst changes, or one removed with
    /// ``removeBudget(_:in:)``) starts with the budget's initial tokens.
    ///
    /// - Parameters:
    ///   - budget: The endpoint, the environment, the rate and the burst.
    ///   - maximumWait: The longest the caller would wait for a reserved token.
    /// - Returns: Whether a token was taken, and the wait.
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func takeBudgetToken(
        from budget: FleetBudget,
        maximumWait: Duration
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        withBucket(budget) { bucket, now in bucket.take(now: now, maximumWait: maximumWait) }
    }

    /// Takes one token for a refresh from the budget every service sharing this cache shares: only
    /// when one is banked now and `reserve` stay banked after.
    ///
    /// - Parameters:
    ///   - budget: The endpoint, the environment, the rate and the burst.
    ///   - reserve: The tokens that must stay banked after this one.
    /// - Returns: Whether a token was taken (never with a wait), and the wait until one could be.
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func takeBudgetToken(
        from budget: FleetBudget,
        keeping reserve: Double
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        withBucket(budget) { bucket, now in bucket.take(now: now, keeping: reserve) }
    }

    /// Runs `body` on the budget's bucket under its lock; a bucket this cache does not hold, or
    /// whose rate or burst changes, starts again with the budget's initial tokens.
    private func withBucket(
        _ budget: FleetBudget,
        _ body: (inout TokenBucket, Date) -> (taken: Bool, wait: Duration)
    ) -> FleetBudgetToken {
        let key = EndpointKey(environment: budget.environment, endpoint: budget.endpoint)
        let now = now()
        let answer = budgets.withLock { budgets in
            func started() -> TokenBucket {
                TokenBucket(rate: budget.ratePerSecond, burst: budget.burst, tokens: budget.initialTokens, now: now)
            }
            var bucket = budgets[key] ?? started()
            if bucket.rate != budget.ratePerSecond || bucket.burst != budget.burst { bucket = started() }
            let answer = body(&bucket, now)
            budgets[key] = bucket
            return answer
        }
        return answer.taken ? .taken(wait: answer.wait) : .notTaken(wait: answer.wait)
    }

    /// Forgets the fleet's budget for the endpoint in the environment, as a shared store that lost
    /// the key (a flush, an eviction) would: the next token taken starts a bucket with the budget's
    /// initial tokens.
    public func removeBudget(_ endpoint: GroupsEndpoint, in environment: StoreEnvironment) {
        _ = budgets.withLock { $0.removeValue(forKey: EndpointKey(environment: environment, endpoint: endpoint)) }
    }

    /// Forgets the answers kept for a customer, in every environment.
    ///
    /// - Parameter customerID: The id the customer's decisions are asked with.
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func invalidate(anyTransactionID customerID: String) async throws(AppStoreGroupsError) {
        generations.withLock { generations in
            generations.makeRoom(StoreEnvironment.allCases.count)
            for environment in StoreEnvironment.allCases {
                generations.customers[CustomerKey(environment: environment, customerID: customerID), default: 0] += 1
            }
            answers.remove(customerID: customerID)
            generations.invalidations += 1
        }
    }

    /// Forgets the answers that hold the group, in every environment, after counting an
    /// invalidation of the group (a walk over every answer kept: the answers are the index).
    ///
    /// - Parameter groupID: The group's id.
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func invalidate(groupID: String) async throws(AppStoreGroupsError) {
        generations.withLock { generations in
            generations.makeRoom(1)
            generations.groupCount += 1
            generations.groups[groupID] = generations.groupCount
            answers.remove { $0.holds(groupID: groupID) }
            generations.invalidations += 1
        }
    }

    /// Forgets every answer kept (locks and rate-limit instants stay).
    ///
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func invalidateAll() async throws(AppStoreGroupsError) {
        generations.withLock { generations in
            generations.all += 1
            answers.removeAll()
            generations.invalidations += 1
        }
    }

    /// How many invalidations this cache has seen, counted under the lock that forgets the answers.
    ///
    /// - Returns: The count.
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func invalidationCount() async throws(AppStoreGroupsError) -> UInt64? {
        generations.withLock { $0.invalidations }
    }

    /// The answer kept for a customer and the invalidation count, read under one lock.
    ///
    /// - Parameters:
    ///   - customerID: The id the customer's decisions are asked with.
    ///   - environment: The environment the answer stands for.
    /// - Returns: The answer (or `nil`) and the count.
    /// - Throws: Never: the signature is the protocol's, for caches across a network.
    public func answerAndInvalidationCount(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> (answer: CachedGroupsAnswer?, invalidationCount: UInt64?) {
        let key = CustomerKey(environment: environment, customerID: customerID)
        let now = now()
        // Under the lock the invalidations forget answers under: the answer and the count agree.
        return generations.withLock { (answers.entry(key, now: now)?.answer, $0.invalidations) }
    }

    /// Forgets the `Retry-After` instant of an endpoint, as an operator deleting the key in a shared
    /// store would.
    public func removeRateLimit(_ endpoint: GroupsEndpoint, in environment: StoreEnvironment) {
        _ = rateLimits.withLock { $0.removeValue(forKey: EndpointKey(environment: environment, endpoint: endpoint)) }
    }
}
