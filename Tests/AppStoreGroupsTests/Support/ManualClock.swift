import Foundation
import GroupDecisionsTesting

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// A wall clock the test moves by hand; its sleep advances it instead of waiting, and records each
/// wait.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date
    private var waits: [Duration] = []

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = start
    }

    var date: Date { lock.withLock { current } }

    var sleeps: [Duration] { lock.withLock { waits } }

    func advance(by duration: Duration) {
        lock.withLock { current = current.addingTimeInterval(duration.seconds) }
    }

    var now: @Sendable () -> Date { { self.date } }

    var timeSource: TimeSource {
        TimeSource(
            now: { self.date },
            sleep: { duration in
                self.lock.withLock { self.waits.append(duration) }
                self.advance(by: duration)
                await Task.yield()
            }
        )
    }
}
