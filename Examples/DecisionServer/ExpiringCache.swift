/// A bounded cache whose entries expire a fixed time after they were loaded, and which loads each
/// key once however many requests ask for it at the same time.
///
/// Failures are not cached: every waiter of a failed load gets its error, and the next request
/// loads again.
actor ExpiringCache<Key: Hashable & Sendable, Value: Sendable> {
    private struct Entry {
        var load: Task<Value, any Error>
        /// `nil` while the load is in flight.
        var expires: ContinuousClock.Instant?
    }

    let timeToLive: Duration
    let capacity: Int
    private var entries: [Key: Entry] = [:]
    private let clock = ContinuousClock()

    init(timeToLive: Duration, capacity: Int) {
        self.timeToLive = timeToLive
        self.capacity = capacity
    }

    /// The cached value, or the value `load` produces (stored until it expires).
    func value(for key: Key, load: @escaping @Sendable () async throws -> Value) async throws -> Value {
        if let entry = entries[key], entry.expires.map({ clock.now < $0 }) ?? true {
            return try await entry.load.value
        }
        makeRoom()
        let task = Task { try await load() }
        entries[key] = Entry(load: task, expires: nil)
        do {
            let value = try await task.value
            if entries[key]?.load == task { entries[key]?.expires = clock.now + timeToLive }
            return value
        } catch {
            if entries[key]?.load == task { entries[key] = nil }
            throw error
        }
    }

    /// Drops expired entries; when the cache is still full, the entries closest to expiry.
    private func makeRoom() {
        guard entries.count >= capacity else { return }
        let now = clock.now
        entries = entries.filter { $0.value.expires.map { now < $0 } ?? true }
        guard entries.count >= capacity else { return }
        let loaded = entries.compactMap { key, entry in entry.expires.map { (key, $0) } }.sorted { $0.1 < $1.1 }
        for (key, _) in loaded.prefix(entries.count - capacity + 1) { entries[key] = nil }
    }
}
