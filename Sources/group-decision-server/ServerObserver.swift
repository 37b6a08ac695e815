import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy
import Synchronization

/// What the server logs of the decision service's work: one line per event worth a line.
///
/// Policy reloads (a failed one once per broken version of the files, its errors joined with `; `),
/// every 429 from Apple, and the shared cache failing (at most once a minute) and recovering. Cache
/// hits, misses and fetches are for metrics, not for a log. No line names a customer: the events
/// carry no customer id, and the library replaces one that a cache's error repeats.
final class ServerObserver: GroupDecisionObserver {
    /// When the last line about the shared cache failing was written.
    private let lastCacheComplaint = Mutex<ContinuousClock.Instant?>(nil)
    /// What `GET /metrics` counts.
    let metrics: ServerMetrics

    init(metrics: ServerMetrics) {
        self.metrics = metrics
    }

    func cacheHit(_ event: GroupDecisionEvent.CacheHit) {
        if event.fromSharedCache {
            metrics.sharedHits.add(1, ordering: .relaxed)
        } else {
            metrics.localHits.add(1, ordering: .relaxed)
        }
    }

    func cacheMiss(_ event: GroupDecisionEvent.CacheMiss) {
        metrics.misses.add(1, ordering: .relaxed)
    }

    func staleServed(_ event: GroupDecisionEvent.StaleServed) {
        metrics.staleServed(event.reason.name)
    }

    func fetchFinished(_ event: GroupDecisionEvent.FetchFinished) {
        metrics.upstream(event.endpoint.description, status: event.httpStatus.map { String($0) } ?? "error")
    }

    func budgetExhausted(_ event: GroupDecisionEvent.BudgetExhausted) {
        metrics.budgetRefused(event.endpoint.description)
    }

    func invalidated(_ event: GroupDecisionEvent.Invalidation) {
        metrics.invalidated(event.allCustomers ? "all" : event.groupID != nil ? "group" : "customer")
    }

    func policyReloaded(_ event: GroupDecisionEvent.PolicyReload) {
        metrics.reloaded("reloaded")
        ServerLog.line("policies reloaded (generation \(event.generation))")
    }

    func policyReloadFailed(_ event: GroupDecisionEvent.PolicyReloadFailure) {
        metrics.reloaded("failed")
        let reason = event.error.description.split(separator: "\n").joined(separator: "; ")
        ServerLog.line("policies not reloaded, the previous version keeps serving: \(reason)")
    }

    func rateLimited(_ event: GroupDecisionEvent.RateLimited) {
        metrics.rateLimited(event.endpoint.description)
        ServerLog.line(
            "the App Store answered 429 for \(event.endpoint) in the \(event.environment) environment: "
                + "nothing is sent there before \(event.retryAfter.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true)))"
        )
    }

    func sharedCacheFailed(_ event: GroupDecisionEvent.SharedCacheFailure) {
        metrics.sharedCacheFailed()
        let now = ContinuousClock.now
        let complain = lastCacheComplaint.withLock { last in
            guard last.map({ now - $0 >= .seconds(60) }) ?? true else { return false }
            last = now
            return true
        }
        guard complain else { return }
        ServerLog.line(
            "shared groups cache unavailable, serving from this process's cache "
                + "(this line repeats at most once a minute): \(event.error)"
        )
    }

    func sharedCacheRecovered(_ event: GroupDecisionEvent.SharedCacheRecovery) {
        ServerLog.line("shared groups cache answering again after \(event.unavailableFor)")
    }
}
