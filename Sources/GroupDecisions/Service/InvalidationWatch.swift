import AppStoreGroups
import Foundation
import GroupPolicy
import GroupPolicyBasics

/// This process's reading of the shared cache's invalidation count, which decides whether a copy
/// of an answer kept here may still be served.
///
/// Each copy is stamped with the count this process had read when the read or fetch that produced
/// it began. A copy is served only while its stamp is the count read last and that read began
/// less than ``GroupDecisionService/Configuration/SharedCache/invalidationCheckInterval`` ago; otherwise the
/// caller awaits one reading shared by every caller of this process. An invalidation adds one to
/// the count when it forgets the answers, then waits the interval before it returns, so a request
/// after it returned is served here only from a reading that saw it (see the DocC article
/// "Serving decisions at fleet scale", section "Invalidation across the fleet").
final class InvalidationWatch: Sendable {
    /// A count read, and when its read began.
    struct Reading: Sendable {
        var count: UInt64
        var started: Date
    }

    /// What a reading of the count came to.
    enum Outcome: Sendable {
        /// The count was read (or the cache keeps none).
        case read
        /// The cache could not be read.
        case failed
    }

    private struct State {
        /// The reading begun last among those that answered.
        var last: Reading?
        /// Whether the cache keeps no count (it answered `nil`): copies are then served as before.
        var unsupported = false
        /// The reading under way, which callers join.
        var reading: Task<Outcome, Never>?
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

    /// Whether the cache is known to keep no count.
    var isUnsupported: Bool { state.withLock { $0.unsupported } }

    /// Whether a copy stamped `stamp` may be served at `now`.
    ///
    /// It may when the stamp is the count read last and, when `recently`, that read began less
    /// than the interval before `now`; always with a cache that keeps no count. Without `recently` (the cache cannot be read), a copy stamped before any reading is served
    /// while no reading answered either: as copies were served before the count existed.
    func confirms(_ stamp: UInt64?, now: Date, recently: Bool = true) -> Bool {
        state.withLock { state in
            if state.unsupported { return true }
            guard stamp == state.last?.count else { return false }
            guard recently else { return true }
            guard let last = state.last else { return false }
            return now.timeIntervalSince(last.started) < intervalSeconds
        }
    }

    /// Reads the count, or joins the reading under way.
    func read(_ shared: SharedCacheGuard) async -> Outcome {
        let task = state.withLock { state -> Task<Outcome, Never> in
            if let reading = state.reading { return reading }
            let reading = Task { await self.readOnce(shared) }
            state.reading = reading
            return reading
        }
        return await task.value
    }

    private func readOnce(_ shared: SharedCacheGuard) async -> Outcome {
        let started = now()
        // Even while the cache is skipped as slow: it still answers, so invalidations through the
        // other processes still complete, and one slow read per interval is this process's whole cost.
        let count = await shared.read(evenWhenSlow: true) { cache throws(AppStoreGroupsError) in
            try await cache.invalidationCount()
        }
        state.withLock { $0.reading = nil }
        guard let count else { return .failed }
        record(count, started: started)
        return .read
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
