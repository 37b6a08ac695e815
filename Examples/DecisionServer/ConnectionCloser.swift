import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Connections whose answer is written, waiting for their clients to close: one thread polls them
/// all, reads and drops what the clients still send, and closes each when its client closes, when
/// it has sent a mebibyte, or at its drain deadline.
///
/// Closing a socket whose received bytes were never read makes the kernel send a reset, and a
/// reset can make the client discard the answer it has not read yet; so the answer is followed by
/// a FIN and a drain. When more than the capacity are draining, the one draining longest is closed
/// at once: everything it sent so far has been read, so it still gets a FIN. Only this thread
/// closes the descriptors it was handed, so none is reused while it polls it.
final class Closer: @unchecked Sendable {
    private struct Draining {
        var connection: Int32
        var deadline: ContinuousClock.Instant
        var drained = 0
    }

    private let lock = NSLock()
    private var added: [Draining] = []
    private let wake = DispatchSemaphore(value: 0)
    private let capacity: Int
    private let drainTimeout: Duration

    init(capacity: Int, drainTimeout: Duration) {
        self.capacity = max(capacity, 1)
        self.drainTimeout = drainTimeout
        Thread.detachNewThread { [self] in run() }
    }

    /// Sends FIN on the connection and takes it over: it is closed by the closer's thread.
    func add(_ connection: Int32) {
        shutdown(connection, Int32(SHUT_WR))
        let entry = Draining(connection: connection, deadline: .now + drainTimeout)
        lock.lock()
        added.append(entry)
        lock.unlock()
        wake.signal()
    }

    private func run() -> Never {
        var draining: [Draining] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            lock.lock()
            draining += added
            added.removeAll(keepingCapacity: true)
            lock.unlock()
            if draining.isEmpty {
                wake.wait()
                continue
            }
            var polled = draining.map { pollfd(fd: $0.connection, events: Int16(POLLIN), revents: 0) }
            _ = poll(&polled, nfds_t(polled.count), 50)
            let now = ContinuousClock.now
            var kept: [Draining] = []
            kept.reserveCapacity(draining.count)
            for (index, var entry) in draining.enumerated() {
                var open = now < entry.deadline
                if open && polled[index].revents != 0 {
                    open = drain(&entry, into: &chunk)
                }
                if open { kept.append(entry) } else { close(entry.connection) }
            }
            // Over capacity, the connections draining longest go first (they come first).
            let excess = kept.count - capacity
            if excess > 0 {
                for index in 0..<excess {
                    var entry = kept[index]
                    _ = drain(&entry, into: &chunk)
                    close(entry.connection)
                }
                kept.removeFirst(excess)
            }
            draining = kept
        }
    }

    /// Reads and drops what has arrived, without waiting; whether the connection stays open.
    private func drain(_ entry: inout Draining, into chunk: inout [UInt8]) -> Bool {
        while entry.drained < 1 << 20 {
            let count = chunk.withUnsafeMutableBytes {
                recv(entry.connection, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            if count > 0 {
                entry.drained += count
            } else if count < 0, errno == EINTR {
                continue
            } else {
                return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
            }
        }
        return false
    }
}
