import AppStoreGroups
import Foundation
import GroupPolicyBasics

/// This process's reading of the shared cache's invalidation count, which decides whether a copy
/// of an answer kept here may still be served: a lease, renewed through the shared cache.
///
/// Callers share one reading at a time (see the article "Serving decisions at fleet scale",
/// section "Invalidation across the fleet").
final class InvalidationWatch: Sendable {
    /// A count read, and when its read began.
    struct Reading: Sendable {
        var count: UInt64
        var started: Date
    }

    private struct State {
        /// The reading begun last among those that answered.
        var last: Reading?
        /// When the last reading that failed began: none is begun again within the interval.
        var lastFailure: Date?
        /// Whether the cache keeps no count (it answered `nil`): copies are then served as before.
        var unsupported = false
        /// The reading under way, which callers join.
        var reading: Task<Bool, Never>?
    }

    private let intervalSeconds: Double
    private let state = Locked(State())
    private let local: LocalGroupsCache
    private let now: @Sendable () -> Date

    init(interval: Duration, local: LocalGroupsCache, now: @escaping @Sendable () -> Date) {
        self.intervalSeconds = interval.seconds
        self.local = local
        self.now = now
    }

    /// The stamp for a read or fetch beginning now: the count read last, or `nil` before any.
    var stamp: UInt64? { state.withLock { $0.last?.count } }

    var isUnsupported: Bool { state.withLock { $0.unsupported } }

    /// Whether a copy stamped `stamp` may be served at `now`: the stamp is the count read last, by
    /// a read begun less than the interval before `now` and at or after `since` (a flight's start,
    /// when its copy stands in for a fetch); always with a cache that keeps no count.
    func confirms(_ stamp: UInt64?, now: Date, since: Date? = nil) -> Bool {
        state.withLock { state in
            if state.unsupported { return true }
            guard let last = state.last, stamp == last.count else { return false }
            if let since, last.started < since { return false }
            return now.timeIntervalSince(last.started) < intervalSeconds
        }
    }

    /// Reads the count, or joins the reading under way: whether it was read (or the cache keeps
    /// none); `false` at once when a reading begun less than the interval ago failed, and none
    /// answered since (one call to a failing cache per interval, as one to a healthy one).
    func read(_ shared: SharedCacheGuard, _ cache: any SharedInvalidations) async -> Bool {
        let started = now()
        let task = state.withLock { state -> Task<Bool, Never>? in
            if let reading = state.reading { return reading }
            if let failure = state.lastFailure, started.timeIntervalSince(failure) < intervalSeconds,
                state.last.map({ $0.started < failure }) ?? true
            {
                return nil
            }
            let reading = Task { await self.readOnce(shared, cache) }
            state.reading = reading
            return reading
        }
        guard let task else { return false }
        return await task.value
    }

    private func readOnce(_ shared: SharedCacheGuard, _ cache: any SharedInvalidations) async -> Bool {
        let started = now()
        // Even while the cache is skipped, after a failure or for slowness: a cache that answers
        // takes the other processes' invalidations, and one read per interval is this process's
        // whole cost.
        let count = await shared.read(
            evenWhenSlow: true,
            evenWhenFailing: true,
            isAnswer: { $0 != nil },
            { () throws(AppStoreGroupsError) in try await cache.invalidationCount() }
        )
        state.withLock { state in
            state.reading = nil
            if count == nil { state.lastFailure = started }
        }
        guard let count else { return false }
        record(count, started: started)
        return true
    }

    /// Records a count read by a read that began at `started` (`nil`: the cache keeps none); when
    /// the count moved, forgets every copy stamped otherwise.
    func record(_ count: UInt64?, started: Date) {
        let moved = state.withLock { state -> UInt64? in
            guard let count else {
                state.unsupported = true
                return nil
            }
            // A reading begun before the last one recorded tells nothing newer.
            if let last = state.last, last.started >= started { return nil }
            let moved = state.last?.count != count
            state.last = Reading(count: count, started: started)
            return moved ? count : nil
        }
        if let moved { local.remove { $0.invalidationCount != moved } }
    }
}
