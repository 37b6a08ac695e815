public import GroupPolicy

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A ``SharedGroupsCache`` in this process's memory, bounded in bytes, evicting the least recently used
/// answers first.
///
/// The ``GroupDecisionService`` always keeps one (its first-level cache, and what it falls back
/// on when a shared store is unreachable); give one to several services in a process to share it.
///
/// An answer's cost is an estimate of what it holds on the heap: Apple's body (or, in the
/// service's own cache, the decoded groups kept instead, counted at twice the body's size), the
/// customer id and a fixed 160 bytes of bookkeeping. An answer costing more than the whole capacity is not kept.
/// The estimate errs on the safe side: for answers of about 400 bytes, the service's cache counts 965
/// bytes a customer where the heap grows by about 860.
public final class InMemoryGroupsCache: SharedGroupsCache {
    /// The default capacity, 64 MiB: about 70,000 customers of a typical answer (400 bytes of JSON).
    public static let defaultCapacityBytes = 64 << 20

    /// The most bytes the answers may cost together.
    public let capacityBytes: Int

    private struct Key: Hashable {
        var environment: StoreEnvironment
        var customerID: String
    }

    private struct RateKey: Hashable {
        var environment: StoreEnvironment
        var endpoint: GroupsEndpoint
    }

    /// One kept answer, in a slot of ``State/slots``; the recency list links slots by index, so
    /// marking an answer used touches no hash table.
    private struct Slot {
        var key: Key
        var answer: CachedGroupsAnswer
        var decoded: GetCustomerGroupsResponse?
        var expires: Date
        var cost: Int
        /// The next more recently used slot, or -1.
        var newer: Int
        /// The next less recently used slot, or -1.
        var older: Int
    }

    private struct State {
        /// Where each kept answer's slot is.
        var index: [Key: Int] = [:]
        /// Answers, and emptied slots listed in `free` for reuse.
        var slots: [Slot] = []
        var free: [Int] = []
        /// The most recently used slot, or -1.
        var newest = -1
        /// The least recently used slot, the next to go, or -1.
        var oldest = -1
        var bytes = 0
        var locks: [Key: (owner: String, expires: Date)] = [:]
        var rateLimits: [RateKey: Date] = [:]
    }

    private let state = Locked(State())
    private let now: @Sendable () -> Date

    /// Creates an empty store.
    ///
    /// - Parameters:
    ///   - capacityBytes: The most bytes the answers may cost together. Default
    ///     ``defaultCapacityBytes``.
    ///   - now: The wall clock expiry is measured with. Default: the system clock.
    public init(capacityBytes: Int = defaultCapacityBytes, now: @escaping @Sendable () -> Date = { Date() }) {
        self.capacityBytes = max(0, capacityBytes)
        self.now = now
    }

    /// How many answers the store holds, expired ones not yet evicted included.
    public var count: Int { state.withLock { $0.index.count } }

    /// What the answers held cost together, in bytes (see the type's discussion).
    public var costBytes: Int { state.withLock { $0.bytes } }

    /// The estimated cost of keeping an answer for a customer: with its bytes, or (for the
    /// service's own cache) with its decoded groups instead, counted at twice the bytes.
    static func cost(of answer: CachedGroupsAnswer, customerID: String, decoded: Bool = false) -> Int {
        160 + customerID.utf8.count + (decoded ? 2 : 1) * answer.body.count
    }

    // MARK: SharedGroupsCache

    /// The answer kept for a customer, or `nil` when there is none or it has expired.
    ///
    /// - Parameters:
    ///   - customerID: The id the customer's decisions are asked with.
    ///   - environment: The environment the answer stands for.
    /// - Returns: The answer, or `nil`.
    /// - Throws: Never: the signature is the protocol's, for stores across a network.
    public func answer(
        forCustomer customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> CachedGroupsAnswer? {
        entry(forCustomer: customerID, in: environment)?.answer
    }

    /// Keeps an answer for a customer for `timeToLive`, evicting the least recently used answers
    /// when the store would be over capacity.
    ///
    /// - Parameters:
    ///   - answer: Apple's answer and when it was fetched.
    ///   - customerID: The id the customer's decisions are asked with.
    ///   - environment: The environment the answer stands for.
    ///   - timeToLive: How long to keep it.
    /// - Throws: Never: the signature is the protocol's, for stores across a network.
    public func setAnswer(
        _ answer: CachedGroupsAnswer,
        forCustomer customerID: String,
        in environment: StoreEnvironment,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) {
        set(answer, decoded: nil, forCustomer: customerID, in: environment, timeToLive: timeToLive)
    }

    /// Takes the customer's fetch lock when nobody holds it or the holder's has expired.
    ///
    /// - Parameters:
    ///   - customerID: The customer about to be fetched.
    ///   - environment: The environment of the fetch.
    ///   - owner: A value unique to this attempt.
    ///   - timeToLive: When the lock expires if it is not released.
    /// - Returns: Whether this caller now holds the lock.
    /// - Throws: Never: the signature is the protocol's, for stores across a network.
    public func acquireFetchLock(
        forCustomer customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> Bool {
        let key = Key(environment: environment, customerID: customerID)
        let now = now()
        return state.withLock { state in
            if let lock = state.locks[key], now < lock.expires { return false }
            state.locks[key] = (owner, now.addingTimeInterval(timeToLive.seconds))
            return true
        }
    }

    /// Releases the customer's fetch lock if `owner` still holds it.
    ///
    /// - Parameters:
    ///   - customerID: The customer whose lock to release.
    ///   - environment: The environment of the fetch.
    ///   - owner: The value the lock was taken with.
    /// - Throws: Never: the signature is the protocol's, for stores across a network.
    public func releaseFetchLock(
        forCustomer customerID: String,
        in environment: StoreEnvironment,
        owner: String
    ) async throws(AppStoreGroupsError) {
        let key = Key(environment: environment, customerID: customerID)
        state.withLock { state in
            if state.locks[key]?.owner == owner { state.locks[key] = nil }
        }
    }

    /// The instant before which no request may go to the endpoint, or `nil`.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - environment: The environment.
    /// - Returns: The instant, or `nil` when none is set or it has passed.
    /// - Throws: Never: the signature is the protocol's, for stores across a network.
    public func rateLimitedUntil(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> Date? {
        localRateLimitedUntil(endpoint, in: environment)
    }

    /// Records that no request may go to the endpoint before `instant`, unless a later instant is
    /// already recorded.
    ///
    /// - Parameters:
    ///   - instant: The `Retry-After` instant.
    ///   - endpoint: The endpoint that answered 429.
    ///   - environment: The environment it answered for.
    /// - Throws: Never: the signature is the protocol's, for stores across a network.
    public func setRateLimitedUntil(
        _ instant: Date,
        for endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) {
        setLocalRateLimitedUntil(instant, for: endpoint, in: environment)
    }

    /// Forgets the answers kept for a customer, in every environment.
    ///
    /// - Parameter customerID: The id the customer's decisions are asked with.
    /// - Throws: Never: the signature is the protocol's, for stores across a network.
    public func invalidate(customer customerID: String) async throws(AppStoreGroupsError) {
        invalidateLocally(customer: customerID)
    }

    /// Forgets every answer kept.
    /// - Throws: Never: the signature is the protocol's, for stores across a network.
    public func invalidateAll() async throws(AppStoreGroupsError) {
        invalidateAllLocally()
    }

    // MARK: Synchronous access for the service

    /// The entry kept for a customer with its decoded groups, if still alive; marks it most
    /// recently used.
    func entry(
        forCustomer customerID: String,
        in environment: StoreEnvironment
    ) -> (answer: CachedGroupsAnswer, decoded: GetCustomerGroupsResponse?)? {
        entry(forCustomer: customerID, in: environment, now: now())
    }

    /// ``entry(forCustomer:in:)`` at an instant the caller has read already.
    ///
    /// The service's hit path reads the clock once per call. One hash lookup under the lock; the
    /// recency list is relinked by slot index.
    func entry(
        forCustomer customerID: String,
        in environment: StoreEnvironment,
        now: Date
    ) -> (answer: CachedGroupsAnswer, decoded: GetCustomerGroupsResponse?)? {
        let key = Key(environment: environment, customerID: customerID)
        return state.withLock { state in
            guard let slot = state.index[key] else { return nil }
            guard now < state.slots[slot].expires else {
                Self.remove(slot: slot, key: key, from: &state)
                return nil
            }
            if state.newest != slot {
                Self.unlink(slot, in: &state)
                Self.pushNewest(slot, in: &state)
            }
            return (state.slots[slot].answer, state.slots[slot].decoded)
        }
    }

    /// Keeps an answer, or with decoded groups, the groups in place of the bytes (the service
    /// needs them no more once they are in the shared store).
    func set(
        _ answer: CachedGroupsAnswer,
        decoded: GetCustomerGroupsResponse?,
        forCustomer customerID: String,
        in environment: StoreEnvironment,
        timeToLive: Duration
    ) {
        let key = Key(environment: environment, customerID: customerID)
        let cost = Self.cost(of: answer, customerID: customerID, decoded: decoded != nil)
        var answer = answer
        if decoded != nil { answer.body = [] }
        let expires = now().addingTimeInterval(timeToLive.seconds)
        state.withLock { state in
            if let slot = state.index[key] { Self.remove(slot: slot, key: key, from: &state) }
            guard cost <= capacityBytes, timeToLive > .zero else { return }
            while state.bytes + cost > capacityBytes, state.oldest >= 0 {
                let oldest = state.oldest
                Self.remove(slot: oldest, key: state.slots[oldest].key, from: &state)
            }
            let slot = Slot(
                key: key,
                answer: answer,
                decoded: decoded,
                expires: expires,
                cost: cost,
                newer: -1,
                older: -1
            )
            let index: Int
            if let free = state.free.popLast() {
                index = free
                state.slots[index] = slot
            } else {
                index = state.slots.count
                state.slots.append(slot)
            }
            state.index[key] = index
            state.bytes += cost
            Self.pushNewest(index, in: &state)
        }
    }

    func localRateLimitedUntil(_ endpoint: GroupsEndpoint, in environment: StoreEnvironment) -> Date? {
        let key = RateKey(environment: environment, endpoint: endpoint)
        let now = now()
        return state.withLock { state in
            guard let instant = state.rateLimits[key] else { return nil }
            guard now < instant else {
                state.rateLimits[key] = nil
                return nil
            }
            return instant
        }
    }

    func setLocalRateLimitedUntil(_ instant: Date, for endpoint: GroupsEndpoint, in environment: StoreEnvironment) {
        let key = RateKey(environment: environment, endpoint: endpoint)
        state.withLock { state in
            if let known = state.rateLimits[key], known >= instant { return }
            state.rateLimits[key] = instant
        }
    }

    func invalidateLocally(customer customerID: String) {
        state.withLock { state in
            for environment in StoreEnvironment.allCases {
                let key = Key(environment: environment, customerID: customerID)
                if let slot = state.index[key] { Self.remove(slot: slot, key: key, from: &state) }
            }
        }
    }

    func invalidateAllLocally() {
        state.withLock { state in
            state.index = [:]
            state.slots = []
            state.free = []
            state.newest = -1
            state.oldest = -1
            state.bytes = 0
        }
    }

    // MARK: The recency list

    /// Empties a slot (releasing what it held) and lists it for reuse.
    private static func remove(slot: Int, key: Key, from state: inout State) {
        unlink(slot, in: &state)
        state.index[key] = nil
        state.bytes -= state.slots[slot].cost
        state.slots[slot] = Slot(
            key: Key(environment: .production, customerID: ""),
            answer: CachedGroupsAnswer(kind: .notFound, body: [], fetchedAt: .distantPast),
            decoded: nil,
            expires: .distantPast,
            cost: 0,
            newer: -1,
            older: -1
        )
        state.free.append(slot)
    }

    private static func unlink(_ slot: Int, in state: inout State) {
        let newer = state.slots[slot].newer
        let older = state.slots[slot].older
        if newer >= 0 { state.slots[newer].older = older } else { state.newest = older }
        if older >= 0 { state.slots[older].newer = newer } else { state.oldest = newer }
        state.slots[slot].newer = -1
        state.slots[slot].older = -1
    }

    private static func pushNewest(_ slot: Int, in state: inout State) {
        state.slots[slot].older = state.newest
        state.slots[slot].newer = -1
        if state.newest >= 0 { state.slots[state.newest].newer = slot }
        state.newest = slot
        if state.oldest < 0 { state.oldest = slot }
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
