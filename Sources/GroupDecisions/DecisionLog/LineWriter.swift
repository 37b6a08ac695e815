import AppStoreGroups
import Dispatch
import GroupPolicy
import GroupPolicyBasics

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes whole lines to a file or a stream without ever blocking the caller: lines wait in a
/// buffer bounded by bytes and are written by the writer's own serial queue; a line that does not
/// fit is dropped and counted.
///
/// The decision log writes through one, and so does the example server for its standard error. A
/// reader that stops reading (a full pipe, a stopped terminal) or a file that cannot be written
/// (`/dev/full`, a full disk) only costs the lines that do not fit or fail: they are counted and
/// reported to `onLoss`, the first loss at once and then at most once per report interval, and at
/// close.
///
/// A file named by path is checked at most once per reopen interval, before a write: when the path
/// names another file or none (a log shipper renamed or deleted it), the path is opened again,
/// created when missing, and later lines go there. A FIFO is opened without waiting for a reader:
/// with none, opening fails at once (`init` throws) instead of hanging.
package final class LineWriter: Sendable {
    /// Where the lines go.
    package enum Destination: Sendable {
        /// A file, appended to, created (mode 0600) when missing, reopened after a rotation.
        case path(String)
        /// A descriptor already open, such as standard output; closed at the end when `owned`.
        case descriptor(Int32, owned: Bool)
    }

    /// What was lost since the previous report.
    package struct Loss: Sendable, Hashable {
        /// Lines dropped because the buffer was full: the reader did not keep up.
        package var dropped = 0
        /// Lines a write failed for (a full disk, a closed pipe).
        package var failed = 0
        /// The last failure, such as `No space left on device`, when `failed` is not zero.
        package var lastError: String?

        package init(dropped: Int = 0, failed: Int = 0, lastError: String? = nil) {
            self.dropped = dropped
            self.failed = failed
            self.lastError = lastError
        }
    }

    /// Why a destination cannot be opened.
    package struct OpenError: Error, Sendable {
        /// The path that did not open.
        package var path: String
        /// Why, such as `No such file or directory`.
        package var reason: String
    }

    private let core: Core

    /// Opens the destination and starts a writer for it.
    ///
    /// - Parameters:
    ///   - destination: The file or descriptor.
    ///   - capacityBytes: The most bytes of lines waiting to be written.
    ///   - reportInterval: The least time between two reports of losses.
    ///   - reopenInterval: The least time between two checks that the path still names the file.
    ///   - label: The writer queue's label.
    ///   - onLoss: Receives the losses, on the writer's queue.
    /// - Throws: ``OpenError`` when the path cannot be opened.
    package init(
        _ destination: Destination,
        capacityBytes: Int,
        reportInterval: Duration = .seconds(60),
        reopenInterval: Duration = .seconds(1),
        label: String = "AppStoreGroups.LineWriter",
        onLoss: @escaping @Sendable (Loss) -> Void
    ) throws(OpenError) {
        let output = try Output(destination, reopenInterval: reopenInterval)
        core = Core(
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

    /// Queues `line` and a newline, or drops and counts it when the buffer is full.
    ///
    /// Never waits for the destination, only for the buffer's lock.
    ///
    /// - Parameters:
    ///   - line: The line, without its newline.
    ///   - evenWhenFull: Queues the line beyond the capacity (for a rare line such as a report of
    ///     this writer's own losses, which must not be lost to them).
    package func write(_ line: String, evenWhenFull: Bool = false) {
        core.enqueue(Array(line.utf8) + [10], evenWhenFull: evenWhenFull)
    }

    /// Waits until every line queued before the call was written (or counted lost), or `timeout`
    /// passes, blocking the calling thread.
    ///
    /// - Returns: Whether the lines were all handled in time.
    package func flush(within timeout: Duration) -> Bool {
        core.flush(within: timeout)
    }
}

/// The buffer and its writer; outlives the ``LineWriter`` until the last lines are handled.
private final class Core: Sendable {
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
    private let output: Output
    private let reportInterval: Duration
    private let queue: DispatchQueue
    private let onLoss: @Sendable (LineWriter.Loss) -> Void

    init(
        output: Output,
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

/// The open descriptor, touched only on the writer's queue (and at its creation).
private final class Output: @unchecked Sendable {
    enum Outcome {
        case written
        case failed(String)
        case abandoned
    }

    private let path: String?
    private let owned: Bool
    private let reopenInterval: Duration
    private var descriptor: Int32
    private var identity: (device: UInt64, inode: UInt64)
    private var isRegular: Bool
    private var lastCheck = ContinuousClock.now
    /// Set when a write found the reader gone: the path is opened again at the next check.
    private var readerGone = false

    /// Whole lines a write takes at most: a regular file takes a large batch in one write, a pipe
    /// no more than it takes atomically (`PIPE_BUF`), so a full pipe never blocks a write midway.
    var batchBytes: Int { isRegular ? 64 << 10 : 4096 }

    init(_ destination: LineWriter.Destination, reopenInterval: Duration) throws(LineWriter.OpenError) {
        self.reopenInterval = reopenInterval
        switch destination {
        case .descriptor(let descriptor, let owned):
            self.path = nil
            self.owned = owned
            self.descriptor = descriptor
        case .path(let path):
            self.path = path
            self.owned = true
            let opened = Self.open(path)
            guard opened >= 0 else {
                throw LineWriter.OpenError(path: path, reason: Self.openFailure(path, errno: errno))
            }
            self.descriptor = opened
        }
        (identity, isRegular) = Self.describe(descriptor)
    }

    func close() {
        if owned { _ = systemClose(descriptor) }
    }

    /// Writes all of `bytes`, waiting for a pipe to take them; `whileWaiting` runs every 250 ms
    /// of waiting, and the write is abandoned when `giveUp` says so while waiting.
    func write(_ bytes: [UInt8], whileWaiting: () -> Void, giveUp: () -> Bool) -> Outcome {
        reopenIfRotated()
        var offset = 0
        while offset < bytes.count {
            if !isRegular {
                var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                let ready = poll(&poller, 1, 250)
                if ready == 0 {
                    if giveUp() { return .abandoned }
                    whileWaiting()
                    continue
                }
                if ready < 0 && errno != EINTR { return .failed(Self.message(errno)) }
                if ready < 0 { continue }
            }
            let (written, error) = bytes[offset...].withUnsafeBytes { unwritten in
                writeSuppressingSIGPIPE(descriptor, unwritten, checkPipe: !isRegular)
            }
            if written > 0 {
                offset += written
            } else if written < 0 && (error == EINTR || error == EAGAIN || error == EWOULDBLOCK) {
                continue
            } else {
                if error == EPIPE { readerGone = true }
                return .failed(Self.message(written == 0 ? EIO : error))
            }
        }
        return .written
    }

    /// Opens the path again when it names another file or none (renamed or deleted by a log
    /// shipper), or when the reader of a FIFO went away; at most once per reopen interval.
    private func reopenIfRotated() {
        guard let path else { return }
        let now = ContinuousClock.now
        guard now - lastCheck >= reopenInterval else { return }
        lastCheck = now
        var status = stat()
        if !readerGone, stat(path, &status) == 0, UInt64(status.st_dev) == identity.device,
            UInt64(status.st_ino) == identity.inode
        {
            return
        }
        let opened = Self.open(path)
        // Not openable now (a FIFO without a reader, a directory gone): the old descriptor stays,
        // and the path is tried again at the next check.
        guard opened >= 0 else { return }
        _ = systemClose(descriptor)
        descriptor = opened
        (identity, isRegular) = Self.describe(opened)
        readerGone = false
    }

    /// Opens for appending, created when missing; never waits (a FIFO without a reader fails at
    /// once with `ENXIO`).
    private static func open(_ path: String) -> Int32 {
        systemOpen(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0o600)
    }

    private static func describe(_ descriptor: Int32) -> ((UInt64, UInt64), Bool) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return ((0, 0), false) }
        let isRegular = Int(status.st_mode) & Int(S_IFMT) == Int(S_IFREG)
        #if canImport(Darwin)
        if !isRegular { _ = fcntl(descriptor, F_SETNOSIGPIPE, 1) }
        #endif
        return ((UInt64(status.st_dev), UInt64(status.st_ino)), isRegular)
    }

    private static func openFailure(_ path: String, errno code: Int32) -> String {
        var status = stat()
        if code == ENXIO, stat(path, &status) == 0, Int(status.st_mode) & Int(S_IFMT) == Int(S_IFIFO) {
            return "it is a FIFO and nothing reads it; start its reader first"
        }
        return message(code)
    }

    static func message(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

/// One `write`; on a pipe or socket, a write to a reader that went away fails with `EPIPE`
/// without raising `SIGPIPE`, which would end a process that did not ignore it (a library must not
/// change the process's signal handling, so the signal is blocked for this thread and taken back).
private func writeSuppressingSIGPIPE(
    _ descriptor: Int32,
    _ bytes: UnsafeRawBufferPointer,
    checkPipe: Bool
) -> (Int, Int32) {
    #if canImport(Darwin)
    // The descriptor has F_SETNOSIGPIPE.
    let written = systemWrite(descriptor, bytes.baseAddress, bytes.count)
    return (written, errno)
    #else
    guard checkPipe else {
        let written = systemWrite(descriptor, bytes.baseAddress, bytes.count)
        return (written, errno)
    }
    var pipeSignal = sigset_t()
    sigemptyset(&pipeSignal)
    sigaddset(&pipeSignal, SIGPIPE)
    var previous = sigset_t()
    pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
    var pending = sigset_t()
    sigpending(&pending)
    let wasPending = sigismember(&pending, SIGPIPE) == 1
    let written = systemWrite(descriptor, bytes.baseAddress, bytes.count)
    let error = errno
    if written < 0, error == EPIPE, !wasPending {
        var noWait = timespec(tv_sec: 0, tv_nsec: 0)
        _ = sigtimedwait(&pipeSignal, nil, &noWait)
    }
    pthread_sigmask(SIG_SETMASK, &previous, nil)
    return (written, error)
    #endif
}

// File-level wrappers: inside the writer, `open`, `write` and `close` name its own methods.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}

private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}

private func systemClose(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
