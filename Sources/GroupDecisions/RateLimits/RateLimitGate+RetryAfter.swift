import AppStoreGroups
import Foundation
import GroupPolicy

/// The `Retry-After` instant a 429 names: how the gate closes after one, and reads the instant
/// that holds (see ``RateLimitGate``'s discussion, "429" and "Fleet").
extension RateLimitGate {
    /// The instant the endpoint is held until, or `nil`: the shared cache's when it answers (a key
    /// that is gone opens the gate), this process's otherwise; never further than the longest hold
    /// from when this process first saw that instant (a far one left in the shared cache, by an
    /// earlier version or a clock far ahead, holds an hour, not for as long as it says).
    func heldUntil(_ key: EndpointKey) async -> Date? {
        var read = SharedHold.unavailable
        if let shared, let cache = shared.caches.rateLimits,
            let answer = await shared.read({ () throws(AppStoreGroupsError) in
                try await cache.rateLimitedUntil(key.endpoint, in: key.environment)
            })
        {
            read = answer.map(SharedHold.until) ?? .open
        }
        let now = timeSource.now()
        let longest = configuration.maximumRateLimitHold.seconds
        let held = instants.withLock { instants -> Date? in
            switch read {
            case .unavailable:
                // What this process knows holds.
                let sharedHold = instants[key]?.shared.map { min($0.instant, $0.seen + longest) }
                return [instants[key]?.own, sharedHold].compactMap { $0 }.max()
            case .open:
                // The shared cache answered with no instant: the gate is open, however this
                // process was held.
                instants[key] = nil
                return nil
            case .until(let instant):
                // The shared cache's instant is the one, however this process was held.
                if instants[key]?.shared?.instant != instant { instants[key] = (nil, (instant, now)) }
                return instants[key]?.shared.map { min($0.instant, $0.seen + longest) }
            }
        }
        guard let held, held > now else { return nil }
        return held
    }

    /// Closes the gate after a 429 (here and in the shared cache), and returns the error with the
    /// instant the gate holds until; any other error is returned as it is.
    func close(_ key: EndpointKey, after error: AppStoreGroupsError) async -> AppStoreGroupsError {
        guard error.code == .rateLimitExceeded, error.httpStatus == 429 else { return error }
        let now = timeSource.now()
        let named = error.retryAfter ?? now + configuration.rateLimitHoldWithoutRetryAfter.seconds
        let instant = max(min(named, now + configuration.maximumRateLimitHold.seconds), now + 1)
        instants.withLock { instants in
            let own = max(instants[key]?.own ?? instant, instant)
            instants[key] = (own, instants[key]?.shared)
        }
        if let shared, let cache = shared.caches.rateLimits {
            _ = await shared.read(evenWhenSlow: true) { () throws(AppStoreGroupsError) in
                try await cache.setRateLimitedUntil(instant, for: key.endpoint, in: key.environment)
            }
        }
        observer.rateLimited(
            GroupDecisionEvent.RateLimited(
                endpoint: key.endpoint,
                environment: key.environment,
                retryAfter: instant,
                requestedRetryAfter: error.retryAfter
            )
        )
        var held = error
        held.retryAfter = instant
        return held
    }
}

/// What the shared cache said of an endpoint's `Retry-After` instant.
private enum SharedHold {
    /// No shared cache, or it could not be read.
    case unavailable
    /// It holds no instant: the endpoint is open.
    case open
    /// It holds this instant.
    case until(Date)
}
