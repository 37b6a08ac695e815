import Dispatch

/// Writes whole lines to a file or a stream without ever blocking the caller: lines wait in a
/// buffer bounded by bytes and are written by the writer's own serial queue; a line that does not
/// fit is dropped and counted.
///
/// The decision log writes through one, and the decision server its standard error; losses,
/// rotation and FIFOs behave as the decision log's (see ``DecisionLog/jsonLines(path:salt:bufferBytes:onLoss:)``).
package final class LineWriter: Sendable {
    /// Where the lines go.
    package enum Destination: Sendable {
        /// A file, appended to, created (mode 0600) when missing, reopened after a rotation.
        case path(String)
        /// A descriptor already open, such as standard output; closed at the end when `owned`.
        case descriptor(Int32, owned: Bool)
    }

    /// What was lost since the previous report, counted as the decision log counts its records.
    package typealias Loss = DecisionLog.Loss

    /// Why a destination cannot be opened.
    package struct OpenError: Error, Sendable {
        /// The path that did not open.
        package var path: String
        /// Why, such as `No such file or directory`.
        package var reason: String
    }

    private let core: LineWriterCore

    /// Opens the destination and starts a writer for it, holding at most `capacityBytes` of lines
    /// waiting; `onLoss` receives the losses on the writer's queue (a queue labelled `label`), at
    /// most once per `reportInterval`, and the path is checked at most once per `reopenInterval`.
    ///
    /// - Throws: ``OpenError`` when the path cannot be opened.
    package init(
        _ destination: Destination,
        capacityBytes: Int,
        reportInterval: Duration = .seconds(60),
        reopenInterval: Duration = .seconds(1),
        label: String = "GroupDecisions.LineWriter",
        onLoss: @escaping @Sendable (Loss) -> Void
    ) throws(OpenError) {
        let output = try LineWriterOutput(destination, reopenInterval: reopenInterval)
        core = LineWriterCore(
            output: output,
            capacityBytes: capacityBytes,
            reportInterval: reportInterval,
            queue: DispatchQueue(label: label),
            onLoss: onLoss
        )
    }

    deinit {
        core.close()
    }

    /// The most bytes of lines that may wait; changing it never drops a line already waiting.
    package var capacityBytes: Int {
        get { core.state.withLock { $0.capacity } }
        set { core.state.withLock { $0.capacity = newValue } }
    }

    /// Queues `line` and a newline, or drops and counts it when the buffer is full (unless
    /// `evenWhenFull`, for a rare line such as a report of this writer's own losses); never waits
    /// for the destination, only for the buffer's lock.
    package func write(_ line: String, evenWhenFull: Bool = false) {
        core.enqueue(Array(line.utf8) + [10], evenWhenFull: evenWhenFull)
    }

    /// Waits until every line queued before the call was written (or counted lost), or `timeout`
    /// passes, blocking the calling thread: whether the lines were all handled in time.
    package func flush(within timeout: Duration) -> Bool {
        core.flush(within: timeout)
    }
}
