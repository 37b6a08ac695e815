import GroupPolicy

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Refreshes come second: a refresh (ahead of the time to live, or of an expired answer that can
/// still be served stale) is sent only when a token is banked now beyond the reserve kept for first
/// fetches, and no `Retry-After` instant holds; it never waits.
extension RateLimitGate {
    /// Admits a refresh's request when the budget spares a token at once.
    ///
    /// See the extension's discussion; send it with ``sendAdmitted(_:_:)``. Otherwise throws
    /// ``AppStoreGroupsError/Code/rateLimitExceeded`` at once, without an HTTP status.
    ///
    /// A refusal is not reported as ``GroupDecisionObserver/budgetExhausted(_:)``: no caller was
    /// refused (a caller is served the answer it has, reported as stale).
    func admitRefresh(_ key: EndpointKey) async throws(AppStoreGroupsError) {
        if let until = await heldUntil(key) {
            throw AppStoreGroupsError(
                code: .rateLimitExceeded,
                message: "the App Store asked for no \(key.endpoint) requests before this instant; "
                    + "the refresh was not sent",
                retryAfter: until
            )
        }
        if let wait = await takeRefreshToken(key) {
            throw AppStoreGroupsError(
                code: .rateLimitExceeded,
                message: "the \(key.endpoint) budget has no token to spare beyond the reserve kept for first "
                    + "fetches; the refresh was not sent",
                retryAfter: timeSource.now() + wait.seconds
            )
        }
    }

    /// Takes a refresh's token from the budget that holds now: `nil` when taken, or the wait until
    /// one could be.
    private func takeRefreshToken(_ key: EndpointKey) async -> Duration? {
        let rate = configuration.rate(for: key.environment)
        let burst = configuration.burst(for: key.environment)
        var budget = Budget.process
        if let shared, shared.cache.keepsFleetBudget {
            let answer = await shared.read(evenWhenSlow: true) { cache throws(AppStoreGroupsError) in
                try await cache.takeBudgetToken(
                    key.endpoint,
                    in: key.environment,
                    ratePerSecond: rate,
                    burst: burst,
                    keeping: configuration.reserve(burst: burst)
                )
            }
            switch answer {
            case .taken?: return nil
            case .notTaken(let wait)?: return wait
            case .notSupported?: budget = .process
            case nil: budget = .share
            }
        }
        let share = budget == .share ? configuration.fallbackShare : 1
        let now = timeSource.now()
        let answer = (budget == .share ? shareBuckets : buckets).withLock { buckets in
            var bucket = buckets[key] ?? TokenBucket(rate: rate * share, burst: max(1, burst * share), now: now)
            let answer = bucket.take(now: now, keeping: configuration.reserve(burst: bucket.burst))
            buckets[key] = bucket
            return answer
        }
        return answer.taken ? nil : answer.wait
    }
}
