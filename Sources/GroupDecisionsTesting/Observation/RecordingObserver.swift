import Foundation
public import GroupDecisions
import Synchronization

/// An observer that records what a service told it, one line per event in the order told, for a
/// test to compare with exact lines.
///
/// The lines: `cache hit`, `cache hit (shared)`, `cache miss`,
/// `stale served: <code> (<reason>, <age in ms> ms)`,
/// `fetch started: <endpoint>`, `fetch finished: <endpoint> <status or "no status">`,
/// `rate limited: <endpoint> until <ms> (asked <ms or "none">)`, `budget exhausted: <endpoint>`
/// (with ` (Retry-After)` when an instant holds), `shared cache failed[ (slow)]: <error>`,
/// `shared cache recovered`, `invalidated one|all[, shared cache updated|not updated]`,
/// `policy reloaded: <revision> generation <n>`, `policy reload failed: <code>, <revision> serving`.
/// The decision log's records are kept apart, in ``records``.
public final class RecordingObserver: GroupDecisionObserver, Sendable {
    private let stored = Mutex<[String]>([])
    private let storedRecords = Mutex<[DecisionLogRecord]>([])

    /// An observer that has recorded nothing yet.
    public init() {}

    /// Every event, as a line.
    public var events: [String] { stored.withLock { $0 } }

    /// The lines of the events whose line starts with `prefix`.
    public func events(_ prefix: String) -> [String] { events.filter { $0.hasPrefix(prefix) } }

    /// The shared cache's failures, as `shared cache failed: <error>`.
    public var lines: [String] { events("shared cache failed") }

    /// The decision log's records, in the order told.
    public var records: [DecisionLogRecord] { storedRecords.withLock { $0 } }

    private func record(_ line: String) { stored.withLock { $0.append(line) } }

    private static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// Records `cacheHit`.
    public func cacheHit(_ event: GroupDecisionEvent.CacheHit) {
        record("cache hit\(event.fromSharedCache ? " (shared)" : "")")
    }
    /// Records `cacheMiss`.
    public func cacheMiss(_ event: GroupDecisionEvent.CacheMiss) { record("cache miss") }
    /// Records `staleServed`.
    public func staleServed(_ event: GroupDecisionEvent.StaleServed) {
        let (seconds, attoseconds) = event.age.components
        let age = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        record("stale served: \(event.error.code) (\(event.reason), \(age) ms)")
    }
    /// Records `fetchStarted`.
    public func fetchStarted(_ event: GroupDecisionEvent.FetchStarted) { record("fetch started: \(event.endpoint)") }
    /// Records `fetchFinished`.
    public func fetchFinished(_ event: GroupDecisionEvent.FetchFinished) {
        record("fetch finished: \(event.endpoint) \(event.httpStatus.map(String.init) ?? "no status")")
    }
    /// Records `rateLimited`.
    public func rateLimited(_ event: GroupDecisionEvent.RateLimited) {
        let requested = event.requestedRetryAfter.map { String(Self.milliseconds($0)) } ?? "none"
        record("rate limited: \(event.endpoint) until \(Self.milliseconds(event.retryAfter)) (asked \(requested))")
    }
    /// Records `budgetExhausted`.
    public func budgetExhausted(_ event: GroupDecisionEvent.BudgetExhausted) {
        record("budget exhausted: \(event.endpoint)\(event.heldByRetryAfter ? " (Retry-After)" : "")")
    }
    /// Records `sharedCacheFailed`.
    public func sharedCacheFailed(_ event: GroupDecisionEvent.SharedCacheFailure) {
        record("shared cache failed\(event.slow ? " (slow)" : ""): \(event.error)")
    }
    /// Records `sharedCacheRecovered`.
    public func sharedCacheRecovered(_ event: GroupDecisionEvent.SharedCacheRecovery) {
        record("shared cache recovered")
    }
    /// Records `invalidated`.
    public func invalidated(_ event: GroupDecisionEvent.Invalidation) {
        let shared = event.sharedCacheUpdated.map { $0 ? "shared cache updated" : "shared cache not updated" }
        record("invalidated \(event.allCustomers ? "all" : "one")\(shared.map { ", \($0)" } ?? "")")
    }
    /// Records `policyReloaded`.
    public func policyReloaded(_ event: GroupDecisionEvent.PolicyReload) {
        record("policy reloaded: \(event.revision) generation \(event.generation)")
    }
    /// Records `policyReloadFailed`.
    public func policyReloadFailed(_ event: GroupDecisionEvent.PolicyReloadFailure) {
        record("policy reload failed: \(event.error.code), \(event.revision) serving")
    }
    /// Keeps the record in ``records``.
    public func decisionRecorded(_ record: DecisionLogRecord) { storedRecords.withLock { $0.append(record) } }
}
