import AppStoreGroups
package import Foundation

/// A request budget: `rate` tokens a second, up to `burst` banked (default one second's worth, at
/// least one), starting full unless told how many tokens it starts with.
///
/// A caller that finds no token reserves the next one (the balance goes below zero) and waits
/// until it is due, so waiting callers leave in order and never above the rate.
package struct TokenBucket {
    package let rate: Double
    package let burst: Double
    private var tokens: Double
    private var updated: Date

    package init(rate: Double, burst: Double? = nil, tokens: Double? = nil, now: Date) {
        self.rate = rate
        self.burst = burst ?? max(1, rate)
        self.tokens = min(self.burst, max(0, tokens ?? self.burst))
        self.updated = now
    }

    /// Takes a token when one is due within `maximumWait`: whether it was taken, and the wait
    /// before using it (taken) or until the next token is due (not taken).
    package mutating func take(now: Date, maximumWait: Duration) -> (taken: Bool, wait: Duration) {
        refill(now: now)
        if tokens >= 1 {
            tokens -= 1
            return (true, .zero)
        }
        let wait = (1 - tokens) / rate
        let rounded = Duration.milliseconds(Int64(min(wait * 1000, 1e15).rounded(.up)))
        guard wait <= maximumWait.seconds else { return (false, rounded) }
        tokens -= 1
        return (true, rounded)
    }

    /// Takes a token for a refresh: only when one is banked now and `reserve` stay banked after.
    ///
    /// Never reserves one ahead. Whether it was taken, and the wait until it could be.
    package mutating func take(now: Date, keeping reserve: Double) -> (taken: Bool, wait: Duration) {
        refill(now: now)
        guard tokens >= 1 + reserve else {
            let wait = (1 + reserve - tokens) / rate
            return (false, Duration.milliseconds(Int64(min(wait * 1000, 1e15).rounded(.up))))
        }
        tokens -= 1
        return (true, .zero)
    }

    private mutating func refill(now: Date) {
        let elapsed = max(0, now.timeIntervalSince(updated))
        tokens = min(burst, tokens + elapsed * rate)
        updated = max(updated, now)
    }
}
