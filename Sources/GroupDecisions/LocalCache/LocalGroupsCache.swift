import AppStoreGroups
package import Foundation
package import GroupPolicy
import GroupPolicyBasics

#if canImport(Glibc) && canImport(CMallocInfo)
import CMallocInfo
#endif

/// Answers kept in this process's memory, bounded in bytes, the least recently used evicted first:
/// the decision service's own cache (decoded answers) and the store behind `InMemoryGroupsCache`
/// (Apple's bytes).
///
/// Reads and writes are synchronous, one lock each, so a cache hit never suspends; the recency list
/// links slots by index, so marking an answer used touches no hash table. On glibc it can hand
/// freed pages back to the system (`malloc_trim`, when the app asks for it) each time answers
/// costing an eighth of its capacity (at least 4 MiB) have gone (see the DocC article "Serving
/// decisions at fleet scale", section "Memory and the cost of a hit").
package final class LocalGroupsCache: Sendable {
    /// One kept answer and its neighbours in the recency list.
    private struct Slot {
        var key: CustomerKey
        var entry: Entry
        var expires: Date
        var cost: Int
        /// The next more recently used slot, or -1.
        var newer: Int
        /// The next less recently used slot, or -1.
        var older: Int
    }

    /// An answer as kept: Apple's bytes, or (in the service's cache) the decoded groups instead.
    package struct Entry: Sendable {
        package var answer: CachedGroupsAnswer
        package var decoded: GetCustomerGroupsResponse?
        /// In the decision service's cache with a shared cache: the shared cache's invalidation
        /// count this process had read when the read or fetch that produced the answer began (see
        /// ``InvalidationWatch``).
        var invalidationCount: UInt64? = nil

        /// An answer as kept, with its decoding and the invalidation count its fetch began under.
        package init(
            answer: CachedGroupsAnswer,
            decoded: GetCustomerGroupsResponse? = nil,
            invalidationCount: UInt64? = nil
        ) {
            self.answer = answer
            self.decoded = decoded
            self.invalidationCount = invalidationCount
        }

        /// Whether the answer lists the group (decoding Apple's bytes when they are what is kept;
        /// bytes that no longer decode are counted as holding it, so they go too).
        package func holds(groupID: String) -> Bool {
            guard answer.kind == .groups else { return false }
            guard let groups = decoded ?? (try? GetCustomerGroupsResponse(jsonBytes: answer.body)) else { return true }
            return groups.groups.contains { $0.groupID == groupID }
        }
    }

    private struct State {
        var index: [CustomerKey: Int] = [:]
        /// Answers, and emptied slots listed in `free` for reuse.
        var slots: [Slot] = []
        var free: [Int] = []
        /// The most recently used slot, or -1.
        var newest = -1
        /// The least recently used slot, the next to go, or -1.
        var oldest = -1
        var bytes = 0
        /// What the answers removed since memory was last handed back cost.
        var freedBytes = 0
    }

    /// The most bytes the answers may cost together.
    package let capacityBytes: Int
    /// What removed answers may cost before the freed memory is handed back to the system.
    let releaseThreshold: Int
    private let state = Locked(State())
    private let releaseFreedMemory: @Sendable () -> Void

    /// An empty cache whose removed answers' memory `releaseFreedMemory` hands back to the system
    /// (called outside the lock; the service passes ``trimHeap()`` only when the app asks for it).
    package init(capacityBytes: Int, releaseFreedMemory: @escaping @Sendable () -> Void = {}) {
        self.capacityBytes = max(0, capacityBytes)
        self.releaseThreshold = max(4 << 20, self.capacityBytes / 8)
        self.releaseFreedMemory = releaseFreedMemory
    }

    /// Returns the heap's free pages to the system where the allocator can (glibc).
    package static func trimHeap() {
        #if canImport(Glibc) && canImport(CMallocInfo)
        group_policy_heap_trim()
        #endif
    }

    /// Whether removed answers now cost the threshold, restarting the count if so; the caller then
    /// hands the freed memory back, outside the lock.
    private static func takeRelease(_ state: inout State, threshold: Int) -> Bool {
        guard state.freedBytes >= threshold else { return false }
        state.freedBytes = 0
        return true
    }

    /// How many answers are kept, expired ones not yet removed included.
    package var count: Int { state.withLock { $0.index.count } }

    /// What the kept answers cost together, in bytes.
    package var costBytes: Int { state.withLock { $0.bytes } }

    /// The entry kept for a customer if it has not expired at `now`; marks it most recently used.
    package func entry(_ key: CustomerKey, now: Date) -> Entry? {
        state.withLock { state in
            guard let slot = state.index[key] else { return nil }
            guard now < state.slots[slot].expires else {
                Self.remove(slot: slot, from: &state)
                return nil
            }
            if state.newest != slot {
                Self.unlink(slot, in: &state)
                Self.pushNewest(slot, in: &state)
            }
            return state.slots[slot].entry
        }
    }

    /// Keeps an entry until `expires`, in place of the customer's previous one.
    ///
    /// The least recently used are evicted while over capacity; an entry costing more than the
    /// whole capacity is not kept at all (and evicts nothing). With decoded groups, Apple's bytes are
    /// not kept.
    package func set(_ entry: Entry, for key: CustomerKey, expires: Date) {
        var entry = entry
        if entry.decoded != nil { entry.answer.body = [] }
        let cost = MemoryFootprint.cost(of: entry, customerID: key.customerID)
        let due = state.withLock { state in
            if let slot = state.index[key] { Self.remove(slot: slot, from: &state) }
            guard cost <= capacityBytes else { return Self.takeRelease(&state, threshold: releaseThreshold) }
            while state.bytes + cost > capacityBytes, state.oldest >= 0 {
                Self.remove(slot: state.oldest, from: &state)
            }
            let slot = Slot(key: key, entry: entry, expires: expires, cost: cost, newer: -1, older: -1)
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
            return Self.takeRelease(&state, threshold: releaseThreshold)
        }
        if due { releaseFreedMemory() }
    }

    /// Forgets a customer's entry in one environment.
    package func remove(_ key: CustomerKey) {
        state.withLock { state in
            if let slot = state.index[key] { Self.remove(slot: slot, from: &state) }
        }
    }

    /// Forgets a customer's entries, in every environment.
    package func remove(customerID: String) {
        state.withLock { state in
            for environment in StoreEnvironment.allCases {
                let key = CustomerKey(environment: environment, customerID: customerID)
                if let slot = state.index[key] { Self.remove(slot: slot, from: &state) }
            }
        }
    }

    /// Forgets every entry for which `predicate` holds, and returns how many there were: a walk over
    /// every entry, under the lock (for an invalidation, not for every request).
    @discardableResult
    package func remove(where predicate: (Entry) -> Bool) -> Int {
        let (removed, due) = state.withLock { state in
            let doomed = state.index.values.filter { predicate(state.slots[$0].entry) }
            for slot in doomed { Self.remove(slot: slot, from: &state) }
            return (doomed.count, Self.takeRelease(&state, threshold: releaseThreshold))
        }
        if due { releaseFreedMemory() }
        return removed
    }

    /// Forgets every entry.
    package func removeAll() {
        let due = state.withLock { state in
            let freed = state.freedBytes + state.bytes
            state = State()
            state.freedBytes = freed
            return Self.takeRelease(&state, threshold: releaseThreshold)
        }
        if due { releaseFreedMemory() }
    }

    /// Forgets every entry expired at `now`, and returns how many there were.
    @discardableResult
    package func removeExpired(now: Date) -> Int {
        let (removed, due) = state.withLock { state in
            var removed = 0
            for slot in state.slots.indices where state.slots[slot].cost > 0 && state.slots[slot].expires <= now {
                Self.remove(slot: slot, from: &state)
                removed += 1
            }
            return (removed, Self.takeRelease(&state, threshold: releaseThreshold))
        }
        if due { releaseFreedMemory() }
        return removed
    }

    // MARK: The recency list

    /// Empties a slot (releasing what it held) and lists it for reuse.
    private static func remove(slot: Int, from state: inout State) {
        unlink(slot, in: &state)
        state.index[state.slots[slot].key] = nil
        state.bytes -= state.slots[slot].cost
        state.freedBytes += state.slots[slot].cost
        state.slots[slot] = Slot(
            key: CustomerKey(environment: .production, customerID: ""),
            entry: Entry(answer: CachedGroupsAnswer(kind: .notFound, body: [], fetchedAt: .distantPast)),
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
