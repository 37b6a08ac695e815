import AppStoreGroups
import Foundation
import GroupPolicy

/// Refreshes come second: a refresh (ahead of the time to live, or of an expired answer that can
/// still be served stale) is sent only when a token is banked now beyond the reserve kept for first
/// fetches, and no `Retry-After` instant holds; it never waits.
extension RateLimitGate {
    /// Admits a refresh's request when the budget spares a token at once.
    ///
    /// See the extension's discussion; send it with ``sendAdmitted(_:_:)``. Otherwise throws
    /// `AppStoreGroupsError.Code.rateLimitExceeded` at once, without an HTTP status.
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
        let budget: Budget
        switch await fleetToken(key, .keepingReserve) {
        case .answered(.taken): return nil
        case .answered(.notTaken(let wait)): return wait
        case .answered(.notSupported): budget = .process
        case .fallBack(let fallback): budget = fallback
        }
        if budget == .cutOff { return .milliseconds(Int64(Self.cutOffRetrySeconds(configuration) * 1000)) }
        let answer = withLocalBucket(key, budget: budget) { bucket, now in
            bucket.take(now: now, keeping: configuration.reserve(burst: bucket.burst))
        }
        return answer.taken ? nil : answer.wait
    }
}
