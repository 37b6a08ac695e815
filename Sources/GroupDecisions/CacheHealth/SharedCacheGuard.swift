import AppStoreGroups
import Foundation
import GroupPolicy
import GroupPolicyBasics

/// The decision service's way to its shared cache: every call goes through it, so that a cache that
/// fails, hangs or is consistently slow costs little and is reported once per episode.
///
/// After a failure, or too many slow calls in a row, the cache is skipped for the retry interval
/// (see ``SharedCacheHealth``), and the first answer after a failure is reported as a recovery.
/// Reads are skipped while the cache is, except those the article "Serving decisions at fleet
/// scale" names in "Failure modes" (``read(customerID:evenWhenSlow:evenWhenFailing:isAnswer:_:)``
/// says which); writes a caller must know failed (invalidations) are always tried, and their
/// failure thrown. A customer id a failure's message repeats is replaced by `<customer>`.
final class SharedCacheGuard: Sendable {
    /// The concerns the service uses (see ``SharedCaches``).
    let caches: SharedCaches
    /// When the cache is skipped, and for how long.
    let settings: SharedCacheHealth
    private let timeSource: TimeSource
    private let observer: any GroupDecisionObserver

    private struct Health {
        /// Until when reads skip the cache.
        var skipUntil: Date?
        /// Whether the skip is for slowness only (no call failed).
        var skipIsForSlowness = false
        /// Consecutive calls at or over the slow-call threshold.
        var slowInARow = 0
        /// When the current episode of failures began, or `nil` while the cache is healthy.
        var failingSince: Date?
    }

    private let health = Locked(Health())

    /// Whether a call finds the cache skipped, and why.
    private enum Skip {
        case none, forSlowness, forFailure
    }

    /// Guards the concerns `caches` gives the service: skipped for the retry interval after a
    /// failure, or after so many calls in a row took the slow-call threshold or longer (`health`).
    init(
        _ caches: SharedCaches,
        health: SharedCacheHealth,
        timeSource: TimeSource,
        observer: any GroupDecisionObserver
    ) {
        self.caches = caches.used
        self.settings = health
        self.timeSource = timeSource
        self.observer = observer
    }

    /// Runs a read: its value, or `nil` when the cache is skipped or the call failed (reported).
    ///
    /// - Parameters:
    ///   - customerID: The customer the call is about, to keep out of a failure's message.
    ///   - evenWhenSlow: Whether the call is made while the cache is skipped for slowness only (the
    ///     rate-limit gate's calls); its own time then does not count as a slow call.
    ///   - evenWhenFailing: Whether the call is made while the cache is skipped after a failure too
    ///     (the invalidation count's reading): one that answers promptly ends the skip, when
    ///     `isAnswer` says the store answered (a cache that keeps no count answers without it).
    ///   - isAnswer: Whether a value came from the store, and so tells its health.
    ///   - body: The call.
    /// - Returns: What `body` returned, or `nil`.
    func read<Value: Sendable>(
        customerID: String? = nil,
        evenWhenSlow: Bool = false,
        evenWhenFailing: Bool = false,
        isAnswer: (Value) -> Bool = { _ in true },
        _ body: () async throws(AppStoreGroupsError) -> Value
    ) async -> Value? {
        let start = timeSource.now()
        // Skipped (for a failure, or for slowness); a call made through a skip for slowness is not
        // timed, so it cannot prolong the skip.
        let skip = health.withLock { health -> Skip in
            guard let until = health.skipUntil, start < until else { return .none }
            return health.skipIsForSlowness ? .forSlowness : .forFailure
        }
        switch skip {
        case .forFailure where !evenWhenFailing: return nil
        case .forSlowness where !evenWhenSlow && !evenWhenFailing: return nil
        default: break
        }
        do {
            let value = try await body()
            // A call through a skip for slowness is not timed; one through a failure's skip that
            // the store answered promptly is a recovery.
            if skip == .none || (skip == .forFailure && isAnswer(value)) { answered(after: start) }
            return value
        } catch {
            failed(Self.scrubbing(customerID, from: error), slow: false)
            return nil
        }
    }

    /// Runs a write the caller must know failed: never skipped; a failure is recorded as a read's
    /// is (reads then skip the cache for a while) and thrown, the customer id replaced.
    func write(
        customerID: String? = nil,
        _ body: () async throws(AppStoreGroupsError) -> Void
    ) async throws(AppStoreGroupsError) {
        let start = timeSource.now()
        do {
            try await body()
            answered(after: start)
        } catch {
            let scrubbed = Self.scrubbing(customerID, from: error)
            failed(scrubbed, slow: false)
            throw scrubbed
        }
    }

    /// Records an answer: a recovery after failures, or one more slow call in a row (too many is a
    /// failure).
    private func answered(after start: Date) {
        let now = timeSource.now()
        let slow =
            settings.slowCallsInARow > 0 && Duration.roundedUp(from: start, to: now) >= settings.slowCallThreshold
        let (recoveredAfter, tooSlow) = health.withLock { health -> (Duration?, Bool) in
            guard !slow else {
                health.slowInARow += 1
                return (nil, health.slowInARow >= settings.slowCallsInARow)
            }
            health.slowInARow = 0
            guard let since = health.failingSince else { return (nil, false) }
            // The cache answered, promptly: reads need not wait out the retry interval.
            health.failingSince = nil
            health.skipUntil = nil
            health.skipIsForSlowness = false
            return (Duration.roundedUp(from: since, to: now), false)
        }
        if let recoveredAfter {
            observer.sharedCacheRecovered(GroupDecisionEvent.SharedCacheRecovery(unavailableFor: recoveredAfter))
        }
        if tooSlow {
            let threshold = Int(settings.slowCallThreshold.seconds * 1000)
            failed(
                AppStoreGroupsError(
                    code: .sharedCacheFailure,
                    message: "the shared cache answered \(settings.slowCallsInARow) calls in a row in \(threshold) ms "
                        + "or more"
                ),
                slow: true
            )
        }
    }

    /// Skips the cache for the retry interval and reports the failure.
    private func failed(_ error: AppStoreGroupsError, slow: Bool) {
        let now = timeSource.now()
        health.withLock { health in
            // A call that fails makes the skip a failure's, even one already skipped for slowness.
            let skippedForFailure = health.skipUntil.map { now < $0 && !health.skipIsForSlowness } ?? false
            health.skipIsForSlowness = slow && !skippedForFailure
            health.skipUntil = now + settings.retryInterval.seconds
            health.slowInARow = 0
            if health.failingSince == nil { health.failingSince = now }
        }
        observer.sharedCacheFailed(
            GroupDecisionEvent.SharedCacheFailure(error: error, slow: slow, skippedFor: settings.retryInterval)
        )
    }

    /// The error with every occurrence of the customer id in its message replaced by `<customer>`.
    static func scrubbing(_ customerID: String?, from error: AppStoreGroupsError) -> AppStoreGroupsError {
        guard let customerID, !customerID.isEmpty, error.message.contains(customerID) else { return error }
        var scrubbed = error
        scrubbed.message = error.message.replacing(customerID, with: "<customer>")
        return scrubbed
    }
}
