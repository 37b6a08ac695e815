/// A cache bounded by bytes whose entries expire a fixed time after they were loaded, and which
/// loads each key once however many requests ask for it at the same time.
///
/// Each value's size is estimated by the `cost` given at creation (its strings' UTF-8 bytes plus
/// a fixed overhead per value); when the estimates add up to more than `maximumBytes`, the least
/// recently used entries go first. A value larger than the whole budget is returned but not kept.
/// Failures are not cached: every waiter of a failed load gets its error, and the next request
/// loads again.
actor ExpiringCache<Key: Hashable & Sendable, Value: Sendable> {
    private struct Entry {
        var load: Task<Value, any Error>
        /// `nil` while the load is in flight.
        var expires: ContinuousClock.Instant?
        /// The estimated size; counted once the load has finished.
        var bytes = 0
        /// Neighbours in the recency list (loaded entries only): `older` towards the least recently
        /// used end.
        var older: Key?
        var newer: Key?
    }

    /// What every entry costs besides its value: the key, the dictionary slot, the task.
    static var entryOverhead: Int { 256 }

    let timeToLive: Duration
    let maximumBytes: Int
    private let cost: @Sendable (Value) -> Int
    private var entries: [Key: Entry] = [:]
    private var totalBytes = 0
    private var leastRecent: Key?
    private var mostRecent: Key?
    private let clock = ContinuousClock()

    init(timeToLive: Duration, maximumBytes: Int, cost: @escaping @Sendable (Value) -> Int) {
        self.timeToLive = timeToLive
        self.maximumBytes = maximumBytes
        self.cost = cost
    }

    /// The bytes the cached values are estimated to take now.
    var estimatedBytes: Int { totalBytes }

    /// The cached value, or the value `load` produces (kept until it expires or is evicted).
    func value(for key: Key, load: @escaping @Sendable () async throws -> Value) async throws -> Value {
        if let entry = entries[key] {
            if let expires = entry.expires {
                if clock.now < expires {
                    unlink(key)
                    linkAsMostRecent(key)
                    return try await entry.load.value
                }
                remove(key)
            } else {
                return try await entry.load.value
            }
        }
        let task = Task { try await load() }
        entries[key] = Entry(load: task)
        do {
            let value = try await task.value
            if entries[key]?.load == task { store(value, for: key) }
            return value
        } catch {
            if entries[key]?.load == task { entries[key] = nil }
            throw error
        }
    }

    /// Counts a finished load and evicts the least recently used entries until the total fits.
    private func store(_ value: Value, for key: Key) {
        let bytes = cost(value) + Self.entryOverhead
        guard bytes <= maximumBytes else {
            entries[key] = nil
            return
        }
        entries[key]?.expires = clock.now + timeToLive
        entries[key]?.bytes = bytes
        totalBytes += bytes
        linkAsMostRecent(key)
        while totalBytes > maximumBytes, let victim = leastRecent {
            remove(victim)
        }
    }

    private func remove(_ key: Key) {
        guard let entry = entries[key] else { return }
        if entry.expires != nil {
            unlink(key)
            totalBytes -= entry.bytes
        }
        entries[key] = nil
    }

    private func linkAsMostRecent(_ key: Key) {
        entries[key]?.older = mostRecent
        entries[key]?.newer = nil
        if let previous = mostRecent { entries[previous]?.newer = key } else { leastRecent = key }
        mostRecent = key
    }

    private func unlink(_ key: Key) {
        guard let entry = entries[key] else { return }
        if let older = entry.older { entries[older]?.newer = entry.newer } else { leastRecent = entry.newer }
        if let newer = entry.newer { entries[newer]?.older = entry.older } else { mostRecent = entry.older }
        entries[key]?.older = nil
        entries[key]?.newer = nil
    }
}
