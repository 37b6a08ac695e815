public import Foundation

/// The wall clock and the sleep the client uses: the clock for token timestamps and to turn a
/// `Retry-After` instant into a wait, the sleep for every wait between attempts.
///
/// ``system`` is the real thing. Tests inject their own to observe waits without spending them.
public struct TimeSource: Sendable {
    /// The current wall-clock time.
    public var now: @Sendable () -> Date
    /// Waits for the duration; throws when the task is cancelled.
    public var sleep: @Sendable (Duration) async throws -> Void

    /// Creates a time source.
    ///
    /// - Parameters:
    ///   - now: Returns the current wall-clock time.
    ///   - sleep: Waits for the duration, throwing when the task is cancelled.
    public init(now: @escaping @Sendable () -> Date, sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.now = now
        self.sleep = sleep
    }

    /// The system clock and `Task.sleep`.
    public static let system = TimeSource(
        now: { Date() },
        sleep: { duration in try await Task.sleep(for: duration) }
    )
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The time from `start` to `end`, rounded up to whole milliseconds, never negative.
    ///
    /// Rounding up means a wait until a `Retry-After` instant never ends before it; the microsecond
    /// of slack absorbs floating-point error when both instants are whole milliseconds.
    static func roundedUp(from start: Date, to end: Date) -> Duration {
        let milliseconds = (end.timeIntervalSince1970 - start.timeIntervalSince1970) * 1000
        guard milliseconds > 0 else { return .zero }
        return .milliseconds(Int64((milliseconds - 0.001).rounded(.up)))
    }
}
