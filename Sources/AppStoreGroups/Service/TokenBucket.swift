#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A request budget: `rate` tokens a second, up to one second's worth banked.
///
/// A caller that finds no token reserves the next one (the balance goes below zero) and waits
/// until it is due, so waiting callers leave in order and never above the rate.
struct TokenBucket {
    let rate: Double
    private var tokens: Double
    private var updated: Date

    init(rate: Double, now: Date) {
        self.rate = rate
        self.tokens = max(1, rate)
        self.updated = now
    }

    /// Takes a token: the wait before using it, or `nil` (nothing taken) when that wait would
    /// pass `maximumWait`.
    mutating func reserve(now: Date, maximumWait: Duration) -> Duration? {
        let elapsed = max(0, now.timeIntervalSince(updated))
        tokens = min(max(1, rate), tokens + elapsed * rate)
        updated = max(updated, now)
        if tokens >= 1 {
            tokens -= 1
            return .zero
        }
        let wait = (1 - tokens) / rate
        guard wait <= maximumWait.seconds else { return nil }
        tokens -= 1
        return .milliseconds(Int64((wait * 1000).rounded(.up)))
    }
}
