#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

extension Duration {
    /// The duration in seconds, as a floating-point number.
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The time from `start` to `end`, rounded up to whole milliseconds, never negative.
    ///
    /// Rounding up means a wait until a `Retry-After` instant never ends before it; the microsecond
    /// of slack absorbs floating-point error when both instants are whole milliseconds.
    package static func roundedUp(from start: Date, to end: Date) -> Duration {
        let milliseconds = (end.timeIntervalSince1970 - start.timeIntervalSince1970) * 1000
        guard milliseconds > 0 else { return .zero }
        return .milliseconds(Int64((milliseconds - 0.001).rounded(.up)))
    }
}
