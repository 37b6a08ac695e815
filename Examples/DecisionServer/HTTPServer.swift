import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A minimal HTTP/1.1 server on POSIX sockets: one request per connection, one thread per
/// connection, everything bounded.
///
/// - At most ``Limits/maximumConnections`` connections are served at once. When all are taken, the
///   connection that has waited longest for its head (a slow client, since a normal one sends its
///   head at once) is answered 408 and makes room for the new one; when none has waited
///   ``Limits/evictableAfter``, the new connection is answered 503.
/// - A request head (request line and header fields) may hold ``Limits/maximumHeadBytes``; longer
///   is answered 431. The server takes no request bodies.
/// - The whole head must arrive within ``Limits/readTimeout`` (408 otherwise), however slowly the
///   client drips it; writing the whole answer has the same bound, however slowly the client
///   reads it.
/// - The handler gets ``Limits/handlerTimeout``; past it the client gets 504 and nothing else.
///
/// Connection threads block on their sockets, never on Swift's cooperative threads, so slow
/// clients cannot starve the handlers. Every connection ends gracefully: the answer, then FIN, then
/// a short drain of what the client still sends, so closing with unread bytes never turns the
/// answer into a TCP reset.
final class HTTPServer: Sendable {
    struct Limits: Sendable {
        var maximumConnections = 64
        var maximumHeadBytes = 8192
        var readTimeout: Duration = .seconds(5)
        var handlerTimeout: Duration = .seconds(30)
        /// How long a connection must have been reading its head before a new one may take its
        /// place when every slot is taken: long enough that a client sending its request at once
        /// is never the one dropped.
        var evictableAfter: Duration = .milliseconds(50)
        /// How long a closing connection's leftover bytes are read (and dropped) after the answer.
        var drainTimeout: Duration = .seconds(1)
        /// The most connections draining after their answer, and evicted ones answering 408.
        ///
        /// Each drains for at most the drain timeout. Beyond the first bound, the
        /// connection draining longest is closed at once: what it sent so far was read, so it gets
        /// a FIN, not a reset. Beyond the second, a new connection is answered 503 instead of
        /// evicting one. No connection is ever closed without an answer.
        var maximumClosing = 1024
    }

    /// Who holds the connection slots.
    ///
    /// A connection is `serving` from its accept until its answer is written, unless it was
    /// evicted: then it is `closing`, answering 408, which is bounded separately so a flood cannot
    /// start threads without limit. Refused connections take no thread: the accepting thread
    /// answers them and hands them to the ``Closer``.
    private struct Slots {
        var serving = 0
        var closing = 0
        /// The connections still reading their heads, and since when.
        var readingSince: [Int32: ContinuousClock.Instant] = [:]
        /// Serving connections whose slot went to a newer one; they answer 408 and close.
        var evicted: Set<Int32> = []
    }

    /// The slots behind a pthread mutex: the thread sanitizer follows it, while it reports every
    /// access under a `Synchronization.Mutex` on Linux as a race (that lock is a bare futex).
    private final class SlotTable: @unchecked Sendable {
        private let lock = NSLock()
        private var slots = Slots()

        func withLock<Result>(_ body: (inout Slots) -> Result) -> Result {
            lock.lock()
            defer { lock.unlock() }
            return body(&slots)
        }
    }

    private enum Admission {
        case serve
        case refuse
    }

    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    /// The port the server listens on (the one the system chose when asked for port 0).
    let port: Int
    private let listener: Int32
    private let limits: Limits
    private let handler: @Sendable (ServerRequest) async -> ServerResponse
    private let slots = SlotTable()
    private let closer: Closer

    /// Binds and listens on an IPv4 address.
    init(
        host: String,
        port: Int,
        limits: Limits,
        handler: @escaping @Sendable (ServerRequest) async -> ServerResponse
    ) throws(StartError) {
        // A client that hangs up before reading its answer must not kill the process.
        signal(SIGPIPE, SIG_IGN)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        guard let portNumber = UInt16(exactly: port), inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw StartError(description: "cannot listen on \(host):\(port): give an IPv4 address and a port")
        }
        address.sin_port = in_port_t(portNumber.bigEndian)
        #if canImport(Glibc)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let listener = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard listener >= 0 else { throw StartError(description: "socket: \(Self.lastError())") }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 128) == 0 else {
            let error = Self.lastError()
            close(listener)
            throw StartError(description: "cannot listen on \(host):\(port): \(error)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        self.listener = listener
        self.limits = limits
        self.handler = handler
        self.closer = Closer(capacity: limits.maximumClosing, drainTimeout: limits.drainTimeout)
    }

    /// Accepts connections forever on the calling thread.
    func run() -> Never {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                // A client that gave up while queued is no reason to pause; anything else (out of
                // file descriptors, above all) is: let connections finish instead of spinning.
                if errno != EINTR && errno != ECONNABORTED { usleep(10_000) }
                continue
            }
            switch admit(connection) {
            case .serve:
                Thread.detachNewThread { [self] in
                    serve(connection)
                    finish(connection)
                }
            case .refuse:
                // A new socket's send buffer is empty, so this small answer never blocks the
                // accepting thread; the closer drains and closes the connection.
                write(.error(503, "busy", "too many connections; try again"), to: connection, waiting: false)
                closer.add(connection)
            }
        }
    }

    /// Gives the connection a slot, taking the one of the connection that has waited longest for
    /// its head when all are taken; or has it refused (503), when none has waited long enough or
    /// too many evicted connections are still answering.
    private func admit(_ connection: Int32) -> Admission {
        let now = ContinuousClock.now
        return slots.withLock { slots in
            if slots.serving < limits.maximumConnections {
                slots.serving += 1
                slots.readingSince[connection] = now
                return .serve
            }
            guard slots.closing < limits.maximumClosing,
                let (oldest, since) = slots.readingSince.min(by: { $0.value < $1.value }),
                now - since >= limits.evictableAfter
            else { return .refuse }
            slots.closing += 1
            // Still under the lock, so the evicted connection cannot have closed its descriptor
            // (and the number been reused) in between: it leaves `readingSince` under this lock
            // before it closes. Its blocked receive returns at once and it answers 408.
            slots.readingSince[oldest] = nil
            slots.evicted.insert(oldest)
            shutdown(oldest, Int32(SHUT_RD))
            slots.readingSince[connection] = now
            return .serve
        }
    }

    /// Frees the connection's slot (a serving one, or a closing one when it was evicted), then
    /// hands it to the closer.
    private func finish(_ connection: Int32) {
        // Forgotten before the descriptor is closed, so its number, once reused, is nobody's victim.
        let wasEvicted = slots.withLock { slots in
            slots.readingSince[connection] = nil
            return slots.evicted.remove(connection) != nil
        }
        closer.add(connection)
        slots.withLock { slots in
            if wasEvicted { slots.closing -= 1 } else { slots.serving -= 1 }
        }
    }

    private func serve(_ connection: Int32) {
        let started = ContinuousClock.now
        let response: ServerResponse
        var request: ServerRequest?
        let head = readHead(connection)
        let evicted = slots.withLock { slots in
            slots.readingSince[connection] = nil
            return slots.evicted.contains(connection)
        }
        switch evicted ? .timedOut : head {
        case .closed:
            return
        case .timedOut:
            response = .error(408, "request-timeout", "the request did not arrive in time")
        case .tooLarge:
            response = .error(431, "request-too-large", "the request head is over \(limits.maximumHeadBytes) bytes")
        case .head(let head):
            switch ServerRequest.parse(head: head) {
            case .failure(let refusal):
                response = refusal
            case .success(let parsed):
                request = parsed
                response = answer(parsed)
            }
        }
        write(response, to: connection)
        let elapsed = (ContinuousClock.now - started).components
        let milliseconds = elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
        // The method and path are the client's bytes: escaped, so a forged line cannot be injected.
        let line = "\(request?.method ?? "-") \(request?.path ?? "-") \(response.status) \(milliseconds) ms"
        ServerLog.line(line)
    }

    /// Runs the async handler from this connection's thread, waiting at most the handler timeout.
    private func answer(_ request: ServerRequest) -> ServerResponse {
        let outcome = Outcome()
        Task { [handler] in outcome.finish(await handler(request)) }
        guard let response = outcome.wait(for: limits.handlerTimeout) else {
            return .error(504, "timeout", "no answer within the server's time limit; nothing is granted")
        }
        return response
    }

    private enum HeadResult {
        case head([UInt8])
        case closed
        case timedOut
        case tooLarge
    }

    /// Reads up to the blank line that ends the head, within the read timeout overall.
    private func readHead(_ connection: Int32) -> HeadResult {
        let deadline = ContinuousClock.now + limits.readTimeout
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 2048)
        while true {
            switch Self.boundary(in: received) {
            case .end(let end)?: return .head(Array(received[..<end]))
            // Refused whatever follows: answered at once rather than after the read timeout (a head
            // with LF-only line ends never has the CR LF CR LF that would end it).
            case .broken(let end)?: return .head(Array(received[..<end]))
            case nil: break
            }
            guard received.count < limits.maximumHeadBytes else { return .tooLarge }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return .timedOut }
            setTimeouts(connection, remaining)
            let wanted = min(chunk.count, limits.maximumHeadBytes + 4 - received.count)
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, wanted, 0) }
            if count > 0 {
                received += chunk[..<count]
            } else if count == 0 {
                return .closed
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                return .timedOut
            } else if errno != EINTR {
                return .closed
            }
        }
    }

    private enum Boundary {
        /// The offset of the CR LF CR LF that ends the head.
        case end(Int)
        /// The length of the bytes up to and including a bare LF, a CR followed by anything but LF,
        /// or a NUL: ``ServerRequest/parse(head:)`` refuses them with 400.
        case broken(Int)
    }

    /// Where the head ends, or where it breaks the line rules, whichever comes first; `nil` while
    /// neither has arrived.
    private static func boundary(in bytes: [UInt8]) -> Boundary? {
        for index in bytes.indices {
            switch bytes[index] {
            case 0:
                return .broken(index + 1)
            case 10 where index == bytes.startIndex || bytes[index - 1] != 13:
                return .broken(index + 1)
            case 13 where index + 1 < bytes.endIndex:
                if bytes[index + 1] != 10 { return .broken(index + 2) }
                if index + 3 < bytes.endIndex, bytes[index + 2] == 13, bytes[index + 3] == 10 { return .end(index) }
            default:
                break
            }
        }
        return nil
    }

    private func write(_ response: ServerResponse, to connection: Int32, waiting: Bool = true) {
        let flags = waiting ? Int32(0) : Int32(MSG_DONTWAIT)
        let bytes = response.serialized
        // The whole answer within the read timeout, however slowly the client reads: a timeout
        // per send restarted with each send's progress, so a client reading a kilobyte now and
        // then held its slot for as long as it liked.
        let deadline = ContinuousClock.now + limits.readTimeout
        var sent = 0
        while sent < bytes.count {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return }
            setTimeouts(connection, left)
            let count = bytes[sent...].withUnsafeBytes { unsent in
                unsent.baseAddress.map { send(connection, $0, unsent.count, flags) } ?? -1
            }
            if count > 0 {
                sent += count
            } else if count < 0, errno == EINTR {
                continue
            } else {
                return
            }
        }
    }

    /// Bounds each blocking receive and send on the socket.
    private func setTimeouts(_ connection: Int32, _ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var interval = timeval()
        interval.tv_sec = .init(max(seconds, 0))
        interval.tv_usec = .init(max(attoseconds / 1_000_000_000_000, seconds > 0 ? 0 : 1_000))
        let size = socklen_t(MemoryLayout<timeval>.size)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &interval, size)
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &interval, size)
    }

    private static func lastError() -> String {
        String(cString: strerror(errno))
    }
}

/// A handler's answer, handed from its task to the waiting connection thread.
private final class Outcome: Sendable {
    private let value = Mutex<ServerResponse?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func finish(_ response: ServerResponse) {
        value.withLock { $0 = response }
        done.signal()
    }

    func wait(for duration: Duration) -> ServerResponse? {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        guard done.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success else { return nil }
        return value.withLock { $0 }
    }
}

/// Connections whose answer is written, waiting for their clients to close: one thread polls them
/// all, reads and drops what the clients still send, and closes each when its client closes, when
/// it has sent a mebibyte, or at its drain deadline.
///
/// Closing a socket whose received bytes were never read makes the kernel send a reset, and a
/// reset can make the client discard the answer it has not read yet; so the answer is followed by
/// a FIN and a drain. When more than the capacity are draining, the one draining longest is closed
/// at once: everything it sent so far has been read, so it still gets a FIN. Only this thread
/// closes the descriptors it was handed, so none is reused while it polls it.
private final class Closer: @unchecked Sendable {
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
