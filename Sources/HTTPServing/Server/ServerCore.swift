import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the loops of one server share: its settings, its handler, the listening socket, the
/// bounded counts, the stop, and one another.
final class ServerCore: @unchecked Sendable {
    let limits: HTTPServer.Limits
    /// Set once by `run` before any loop runs, read only afterwards.
    var handler = HTTPHandler(work: .task { _ in HTTPResponse(contentType: "", body: []) }) { _ in
        HTTPResponse(contentType: "", body: [])
    }
    let listener: Int32
    let counts = SharedCounts()
    /// The common header fields as they are written.
    let commonHeaderBytes: [UInt8]
    let usesPoll: Bool
    let loopCount: Int
    /// Set once before any loop runs, read only afterwards.
    var loops: [EventLoop] = []
    private let stopping = Atomic<Bool>(false)
    /// The stop's deadline in nanoseconds from `epoch`.
    private let stopDeadlineNanoseconds = Atomic<Int64>(Int64.max)
    private let epoch = ContinuousClock.now
    private let listenerClosed = Atomic<Bool>(false)

    init(configuration: HTTPServer.Configuration, listener: Int32, loopCount: Int) {
        self.limits = configuration.limits
        self.listener = listener
        self.usesPoll = configuration.usesPoll
        self.loopCount = loopCount
        var bytes: [UInt8] = []
        for (name, value) in configuration.commonHeaderFields {
            bytes += Array("\(name): \(value)\r\n".utf8)
        }
        self.commonHeaderBytes = bytes
    }

    var isStopping: Bool { stopping.load(ordering: .relaxed) }

    var stopDeadline: ContinuousClock.Instant {
        epoch + .nanoseconds(stopDeadlineNanoseconds.load(ordering: .relaxed))
    }

    /// Stops with a deadline `gracePeriod` from now, or keeps an earlier stop's when that is
    /// sooner: a second stop may hurry the first, never give it longer.
    func stop(within gracePeriod: Duration) {
        let (seconds, attoseconds) = (ContinuousClock.now - epoch + gracePeriod).components
        // A grace period of centuries is no deadline, not an overflow.
        let (scaled, overflowed) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflowedAgain) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        let deadline = overflowed || overflowedAgain ? Int64.max : sum
        var current = stopDeadlineNanoseconds.load(ordering: .relaxed)
        while deadline < current {
            let (exchanged, original) = stopDeadlineNanoseconds.compareExchange(
                expected: current,
                desired: deadline,
                ordering: .relaxed
            )
            if exchanged { break }
            current = original
        }
        stopping.store(true, ordering: .sequentiallyConsistent)
        for loop in loops { loop.wake() }
    }

    /// Closes the listening socket, once: from then on the system refuses new connections.
    func closeListener() {
        guard !listenerClosed.exchange(true, ordering: .relaxed) else { return }
        close(listener)
    }
}
