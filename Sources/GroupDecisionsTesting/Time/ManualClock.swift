public import AppStoreGroups
public import Foundation
import Synchronization

/// A wall clock a test moves by hand: give its ``timeSource`` to the service (or the client, or a
/// rate-limit gate), and every sleep advances the clock instead of waiting, and is recorded.
///
/// ```swift
/// let clock = ManualClock()
/// let decisions = try GroupDecisionService(policies: policies, source: source, timeSource: clock.timeSource)
/// clock.advance(by: .seconds(301))   // past the time to live, without waiting for it
/// ```
public final class ManualClock: Sendable {
    private struct State {
        var current: Date
        var waits: [Duration] = []
    }

    private let state: Mutex<State>

    /// A clock showing `start`.
    ///
    /// - Parameter start: The first instant. Default 2027-01-15T08:00:00Z.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Mutex(State(current: start))
    }

    /// The instant the clock shows.
    public var date: Date { state.withLock { $0.current } }

    /// Every sleep asked of ``timeSource``, in order.
    public var sleeps: [Duration] { state.withLock { $0.waits } }

    /// Moves the clock forward (or back, for a negative duration).
    ///
    /// - Parameter duration: How far.
    public func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let interval = Double(seconds) + Double(attoseconds) / 1e18
        state.withLock { $0.current = $0.current.addingTimeInterval(interval) }
    }

    /// The clock as a function, for APIs that take one (`InMemoryGroupsCache(now:)`).
    public var now: @Sendable () -> Date { { self.date } }

    /// The clock and a sleep that advances it (after recording the wait) instead of waiting.
    public var timeSource: TimeSource {
        TimeSource(
            now: { self.date },
            sleep: { duration in
                self.state.withLock { $0.waits.append(duration) }
                self.advance(by: duration)
                await Task.yield()
            }
        )
    }
}
