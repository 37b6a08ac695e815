import Dispatch
import GroupPolicyBasics

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The buffer and its writer; outlives the ``LineWriter`` until the last lines are handled.
final class LineWriterCore: Sendable {
    struct State {
        var lines: [[UInt8]] = []
        /// The index of the oldest line still waiting in `lines`.
        var head = 0
        var queuedBytes = 0
        var capacity: Int
        /// Whether a drain is queued or running: it takes every line queued meanwhile.
        var draining = false
        var closed = false
        var pending = LineWriter.Loss()
        var lastReport: ContinuousClock.Instant?
        var reportScheduled = false
    }

    let state: Locked<State>
    private let output: LineWriterOutput
    private let reportInterval: Duration
    private let queue: DispatchQueue
    private let onLoss: @Sendable (LineWriter.Loss) -> Void

    init(
        output: LineWriterOutput,
        capacityBytes: Int,
        reportInterval: Duration,
        queue: DispatchQueue,
        onLoss: @escaping @Sendable (LineWriter.Loss) -> Void
    ) {
        self.output = output
        self.state = Locked(State(capacity: capacityBytes))
        self.reportInterval = reportInterval
        self.queue = queue
        self.onLoss = onLoss
    }

    func enqueue(_ line: [UInt8], evenWhenFull: Bool) {
        let startDrain = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            guard evenWhenFull || state.queuedBytes + line.count <= state.capacity else {
                state.pending.dropped += 1
                return false
            }
            state.lines.append(line)
            state.queuedBytes += line.count
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        if startDrain { queue.async { self.drain() } }
    }

    func flush(within timeout: Duration) -> Bool {
        let done = DispatchSemaphore(value: 0)
        queue.async { done.signal() }
        return done.wait(timeout: .now() + Self.nanoseconds(timeout)) == .success
    }

    /// Stops taking lines; the queue writes what is left (giving up on a destination that does not
    /// take it), reports every loss not reported yet, and closes an owned descriptor.
    func close() {
        state.withLock { $0.closed = true }
        queue.async {
            self.drain()
            self.report(force: true)
            self.output.close()
        }
    }

    /// Writes batches until the buffer is empty.
    ///
    /// Runs on the queue only.
    private func drain() {
        while let (batch, count) = nextBatch() {
            let closed = { self.state.withLock { $0.closed } }
            switch output.write(batch, whileWaiting: { self.report() }, giveUp: closed) {
            case .written:
                break
            case .failed(let reason):
                state.withLock { state in
                    state.pending.failed += count
                    state.pending.lastError = reason
                }
            case .abandoned:
                // Closing, and the destination takes nothing: what is left is dropped.
                state.withLock { state in
                    state.pending.dropped += count + state.lines.count - state.head
                    state.lines.removeAll()
                    state.head = 0
                    state.queuedBytes = 0
                }
            }
            report()
        }
        report()
    }

    /// Takes whole lines up to the destination's batch size (at least one line), or ends the drain
    /// when none is waiting.
    private func nextBatch() -> ([UInt8], Int)? {
        let limit = output.batchBytes
        return state.withLock { state -> ([UInt8], Int)? in
            guard state.head < state.lines.count else {
                state.lines.removeAll(keepingCapacity: state.lines.count < 4096)
                state.head = 0
                state.draining = false
                return nil
            }
            var batch = state.lines[state.head]
            state.lines[state.head] = []
            state.head += 1
            var count = 1
            while state.head < state.lines.count, batch.count + state.lines[state.head].count <= limit {
                batch += state.lines[state.head]
                state.lines[state.head] = []
                state.head += 1
                count += 1
            }
            state.queuedBytes -= batch.count
            if state.head >= 1024, state.head * 2 >= state.lines.count {
                state.lines.removeFirst(state.head)
                state.head = 0
            }
            return (batch, count)
        }
    }

    /// Hands the losses since the last report to `onLoss` when there are some and the report
    /// interval has passed since the last report (or always, when `force`); otherwise makes sure
    /// one is scheduled for when it will have passed.
    private func report(force: Bool = false) {
        let now = ContinuousClock.now
        let loss = state.withLock { state -> LineWriter.Loss? in
            guard state.pending.dropped + state.pending.failed > 0 else { return nil }
            if !force, let last = state.lastReport, now - last < reportInterval {
                if !state.reportScheduled {
                    state.reportScheduled = true
                    let wait = reportInterval - (now - last)
                    queue.asyncAfter(deadline: .now() + Self.nanoseconds(wait)) {
                        self.state.withLock { $0.reportScheduled = false }
                        self.report()
                    }
                }
                return nil
            }
            state.lastReport = now
            defer { state.pending = LineWriter.Loss() }
            return state.pending
        }
        if let loss { onLoss(loss) }
    }

    static func nanoseconds(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        let total = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !total.overflow, total.partialValue < Int64(Int.max) else { return .never }
        return .nanoseconds(Int(max(0, total.partialValue + attoseconds / 1_000_000_000)))
    }
}
