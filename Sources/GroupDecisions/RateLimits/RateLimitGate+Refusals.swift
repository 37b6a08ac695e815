import AppStoreGroups
import Foundation
import GroupPolicy

/// The errors the gate refuses a request with, nothing sent: a request's (reported as
/// ``GroupDecisionObserver/budgetExhausted(_:)``) and a refresh's (not reported: no caller waits
/// for it).
extension RateLimitGate {
    /// A request refused because a `Retry-After` instant holds past the wait it may take.
    func refusedByRetryAfter(_ key: EndpointKey, until: Date) -> AppStoreGroupsError {
        let message = "the App Store asked for no \(key.endpoint) requests before this instant; none was sent"
        return refused(key, retryAfter: until, message: message, byRetryAfter: true)
    }

    /// A request refused because `budget` has no token due within the wait it may take.
    func refused(_ key: EndpointKey, retryAfter: Date, budget: Budget) -> AppStoreGroupsError {
        let rate = configuration.rate(for: key.environment)
        let message =
            switch budget {
            case .process: "this process's budget of \(rate) \(key.endpoint) requests a second is spent; none was sent"
            case .fleet: "the fleet's budget of \(rate) \(key.endpoint) requests a second is spent; none was sent"
            case .share:
                "this process's share (\(rate * configuration.fallbackShare) a second) of the fleet's budget of "
                    + "\(rate) \(key.endpoint) requests a second, kept while the shared cache is unavailable, "
                    + "is spent; none was sent"
            case .cutOff:
                "the shared cache that keeps the fleet's budget of \(rate) \(key.endpoint) requests a second is "
                    + "unavailable, and this process sends nothing beyond what it granted; none was sent"
            }
        return refused(key, retryAfter: retryAfter, message: message, byRetryAfter: false)
    }

    /// Tells the observer the budget is exhausted, and returns the error.
    private func refused(
        _ key: EndpointKey,
        retryAfter: Date,
        message: String,
        byRetryAfter: Bool
    ) -> AppStoreGroupsError {
        observer.budgetExhausted(
            GroupDecisionEvent.BudgetExhausted(
                endpoint: key.endpoint,
                environment: key.environment,
                retryAfter: retryAfter,
                heldByRetryAfter: byRetryAfter
            )
        )
        return AppStoreGroupsError(code: .rateLimitExceeded, message: message, retryAfter: retryAfter)
    }

    /// A refresh refused because a `Retry-After` instant holds.
    func refreshHeld(_ key: EndpointKey, until: Date) -> AppStoreGroupsError {
        AppStoreGroupsError(
            code: .rateLimitExceeded,
            message: "the App Store asked for no \(key.endpoint) requests before this instant; "
                + "the refresh was not sent",
            retryAfter: until
        )
    }

    /// A refresh refused because the budget has no token to spare beyond the reserve for `wait`.
    func refreshRefused(_ key: EndpointKey, wait: Duration) -> AppStoreGroupsError {
        AppStoreGroupsError(
            code: .rateLimitExceeded,
            message: "the \(key.endpoint) budget has no token to spare beyond the reserve kept for first "
                + "fetches; the refresh was not sent",
            retryAfter: timeSource.now() + wait.seconds
        )
    }
}
