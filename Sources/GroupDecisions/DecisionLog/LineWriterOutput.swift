#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The open descriptor, touched only on the writer's queue (and at its creation).
final class LineWriterOutput: @unchecked Sendable {
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
    #if !canImport(Darwin)  // On Darwin the descriptor has F_SETNOSIGPIPE.
    if checkPipe {
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
    }
    #endif
    let written = systemWrite(descriptor, bytes.baseAddress, bytes.count)
    return (written, errno)
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
