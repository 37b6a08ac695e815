import Foundation

/// At most a few answers computed at once, however many requests the server reads: each answer is
/// the work of one CLI command, bounded as the command is (10 s and 1 GB at its limits), so the
/// playground as a whole stays within what a couple of commands may take.
///
/// A request waits for a place for up to ``maximumWait``; past it, it is refused with one line
/// naming the limit (503), so a backlog of slow answers never holds a connection until its
/// deadline.
final class ComputationGate: @unchecked Sendable {
    /// The most answers computed at once: 2, the cores of the machine the limits were measured on.
    static let defaultCapacity = 2

    let capacity: Int
    let maximumWait: Duration
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var running = 0

    init(capacity: Int = ComputationGate.defaultCapacity, maximumWait: Duration = .seconds(5)) {
        self.capacity = capacity
        self.maximumWait = maximumWait
    }

    /// Runs `body` once a place is free, or refuses.
    func run<Answer>(_ body: () throws(PlaygroundFailure) -> Answer) throws(PlaygroundFailure) -> Answer {
        guard enter() else {
            throw PlaygroundFailure(
                .serviceUnavailable,
                "busy: the playground computes at most \(capacity) answers at once, and none finished within "
                    + "\(Self.seconds(maximumWait)) seconds; try again"
            )
        }
        defer { leave() }
        return try body()
    }

    /// A duration in seconds as the line says it: `5`, `0.2`.
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        guard attoseconds != 0 else { return String(seconds) }
        return String(Double(seconds) + Double(attoseconds) * 1e-18)
    }

    /// Takes a place, waiting up to ``maximumWait``; whether it got one.
    func enter() -> Bool {
        let (seconds, attoseconds) = maximumWait.components
        let deadline = Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) * 1e-18)
        condition.lock()
        defer { condition.unlock() }
        while running >= capacity {
            if !condition.wait(until: deadline), running >= capacity { return false }
        }
        running += 1
        return true
    }

    /// Gives a place back.
    func leave() {
        condition.lock()
        running -= 1
        condition.signal()
        condition.unlock()
    }
}
