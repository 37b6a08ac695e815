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
