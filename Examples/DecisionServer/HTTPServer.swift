import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A minimal HTTP/1.1 server on POSIX sockets: one request per connection, everything bounded.
///
/// - One thread accepts connections and reads every request head, polling them all, so a
///   connection costs a thread only once its head has arrived whole: clients that connect and send
///   nothing, or drip their heads, hold a descriptor and a few kilobytes, never a handler.
/// - At most ``Limits/maximumWaiting`` connections wait for their heads. When that many wait, the
///   one that has waited longest (a slow client, since a normal one sends its head at once) is
///   answered 408 and makes room for the new one; when none has waited ``Limits/evictableAfter``,
///   the new connection is answered 503.
/// - At most ``Limits/maximumConnections`` requests are answered at once, each on a thread of its
///   own; a request whose head arrives while all are taken is answered 503.
/// - A request head (request line and header fields) may hold ``Limits/maximumHeadBytes``; longer
///   is answered 431. The server takes no request bodies.
/// - The whole head must arrive within ``Limits/readTimeout`` (408 otherwise), however slowly the
///   client drips it; writing the whole answer has the same bound, however slowly the client
///   reads it.
/// - The handler gets ``Limits/handlerTimeout``; past it the client gets 504 and nothing else.
///
/// Answering threads block on their sockets, never on Swift's cooperative threads, so slow
/// clients cannot starve the handlers. Every connection ends gracefully: the answer, then FIN, then
/// a short drain of what the client still sends, so closing with unread bytes never turns the
/// answer into a TCP reset.
final class HTTPServer: Sendable {
    struct Limits: Sendable {
        /// Requests answered at once (`--max-connections`).
        var maximumConnections = 64
        /// Connections waiting for their heads, read by the accepting thread.
        var maximumWaiting = 1024
        var maximumHeadBytes = 8192
        var readTimeout: Duration = .seconds(5)
        var handlerTimeout: Duration = .seconds(30)
        /// How long a connection must have been waiting for its head before a new one may take its
        /// place when the most are waiting: long enough that a client sending its request at once
        /// is never the one dropped.
        var evictableAfter: Duration = .milliseconds(50)
        /// How long a closing connection's leftover bytes are read (and dropped) after the answer.
        var drainTimeout: Duration = .seconds(1)
        /// The most connections draining after their answer.
        ///
        /// Each drains for at most the drain timeout. Beyond the bound, the connection draining
        /// longest is closed at once: what it sent so far was read, so it gets a FIN, not a reset.
        /// No connection is ever closed without an answer.
        var maximumClosing = 1024
    }

    /// A connection still reading its head, owned by the accepting thread.
    private struct Waiting {
        var connection: Int32
        var since: ContinuousClock.Instant
        var received: [UInt8] = []
    }

    private enum HeadResult {
        case head([UInt8])
        case closed
        case timedOut
        case tooLarge
    }

    /// Requests being answered, behind a pthread mutex: the thread sanitizer follows it, while it
    /// reports every access under a `Synchronization.Mutex` on Linux as a race (that lock is a
    /// bare futex).
    private final class Answering: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0

        /// Takes a place, when fewer than `limit` are taken.
        func take(below limit: Int) -> Bool {
            lock.lock()
            defer { lock.unlock() }
            guard count < limit else { return false }
            count += 1
            return true
        }

        func release() {
            lock.lock()
            count -= 1
            lock.unlock()
        }
    }

    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    /// The port the server listens on (the one the system chose when asked for port 0).
    let port: Int
    private let listener: Int32
    private let limits: Limits
    private let handler: @Sendable (ServerRequest) async -> ServerResponse
    private let answering = Answering()
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
        Self.raiseDescriptorLimit()
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
        // The longest queue the system allows (it caps the number): a burst of connections waits
        // there instead of having its SYNs dropped and retried a second later.
        guard bound == 0, listen(listener, 4096) == 0, fcntl(listener, F_SETFL, O_NONBLOCK) == 0 else {
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

    /// Raises the soft limit of open files to the hard one, as servers do.
    ///
    /// Waiting, answering and draining connections each hold a descriptor: up to about 2,100 with
    /// the defaults, over the soft limit of 1,024 many systems start a process with.
    private static func raiseDescriptorLimit() {
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(resource, &limit)
    }

    /// Accepts connections and reads their heads forever, on the calling thread.
    ///
    /// `waiting` is oldest first, and `polled[index + 1]` watches `waiting[index]` (`polled[0]`
    /// is the listener); a connection leaves both at once.
    func run() -> Never {
        var waiting: [Waiting] = []
        var polled = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
        var acceptingAgainAt: ContinuousClock.Instant?
        var chunk = [UInt8](repeating: 0, count: 4096)
        var lastPoll = ContinuousClock.now
        while true {
            // One poll costs every watched connection, however few are ready: at most one every
            // 2 ms, so a flood's events are handled in batches (a head waits 2 ms at most for it).
            let sincePoll = ContinuousClock.now - lastPoll
            if sincePoll < Self.pollInterval { Self.sleep(Self.pollInterval - sincePoll) }
            var now = ContinuousClock.now
            if let again = acceptingAgainAt, now >= again { acceptingAgainAt = nil }
            // A pause in accepting (out of descriptors): the listener is not watched meanwhile.
            polled[0].fd = acceptingAgainAt == nil ? listener : -1
            // Wake for the next head's deadline (the oldest waits longest), or when accepting resumes.
            var wake = waiting.first.map { $0.since + limits.readTimeout }
            if let again = acceptingAgainAt { wake = min(wake ?? again, again) }
            for index in polled.indices { polled[index].revents = 0 }
            lastPoll = now
            _ = poll(&polled, nfds_t(polled.count), Self.milliseconds(until: wake, from: now))
            now = .now

            // Heads first, so a connection whose head is in is answered before a newcomer may
            // take its place. Those still waiting move down in place, keeping their order.
            var kept = 0
            for index in waiting.indices {
                var result: HeadResult?
                if polled[index + 1].revents != 0 { result = read(&waiting[index], into: &chunk) }
                if result == nil, now - waiting[index].since >= limits.readTimeout { result = .timedOut }
                if let result {
                    finish(waiting[index], result)
                } else {
                    waiting.swapAt(kept, index)
                    polled.swapAt(kept + 1, index + 1)
                    kept += 1
                }
            }
            waiting.removeLast(waiting.count - kept)
            polled.removeLast(polled.count - 1 - kept)
            if polled[0].fd >= 0, polled[0].revents != 0 {
                acceptingAgainAt = acceptQueued(into: &waiting, polled: &polled, chunk: &chunk)
            }
        }
    }

    /// How often the accepting thread polls at most.
    private static let pollInterval: Duration = .milliseconds(2)

    /// Accepts what is queued (up to 64 connections, so heads are read in between), giving each a
    /// place among the waiting; returns when to accept again after a failure that needs a pause.
    private func acceptQueued(
        into waiting: inout [Waiting],
        polled: inout [pollfd],
        chunk: inout [UInt8]
    ) -> ContinuousClock.Instant? {
        for _ in 0..<64 {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                switch errno {
                case EAGAIN, EWOULDBLOCK: return nil
                case EINTR, ECONNABORTED: continue
                // Out of descriptors above all: let connections finish instead of spinning.
                default: return .now + .milliseconds(10)
                }
            }
            // Blocking, whatever the platform passes on from the listener: answering threads rely
            // on blocking sends bounded by timeouts.
            _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) & ~O_NONBLOCK)
            let now = ContinuousClock.now
            if waiting.count >= limits.maximumWaiting {
                guard let oldest = waiting.first, now - oldest.since >= limits.evictableAfter else {
                    // A new socket's send buffer is empty, so this small answer never blocks.
                    write(.error(503, "busy", "too many connections; try again"), to: connection, waiting: false)
                    closer.add(connection)
                    continue
                }
                waiting.removeFirst()
                polled.remove(at: 1)
                finish(oldest, .timedOut)
            }
            // A client sends its head as soon as it connects: it is often in already.
            var entry = Waiting(connection: connection, since: now)
            if let result = read(&entry, into: &chunk) {
                finish(entry, result)
                continue
            }
            waiting.append(entry)
            polled.append(pollfd(fd: connection, events: Int16(POLLIN), revents: 0))
        }
        return nil
    }

    private static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var interval = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        _ = nanosleep(&interval, nil)
    }

    /// Reads what has arrived without waiting; the head's outcome once there is one.
    private func read(_ entry: inout Waiting, into chunk: inout [UInt8]) -> HeadResult? {
        while true {
            switch Self.boundary(in: entry.received) {
            case .end(let end)?: return .head(Array(entry.received[..<end]))
            // Refused whatever follows: answered at once rather than after the read timeout (a head
            // with LF-only line ends never has the CR LF CR LF that would end it).
            case .broken(let end)?: return .head(Array(entry.received[..<end]))
            case nil: break
            }
            guard entry.received.count < limits.maximumHeadBytes else { return .tooLarge }
            let wanted = min(chunk.count, limits.maximumHeadBytes + 4 - entry.received.count)
            let count = chunk.withUnsafeMutableBytes {
                recv(entry.connection, $0.baseAddress, wanted, Int32(MSG_DONTWAIT))
            }
            if count > 0 {
                entry.received += chunk[..<count]
            } else if count == 0 {
                return .closed
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                return nil
            } else if errno != EINTR {
                return .closed
            }
        }
    }

    /// Answers a connection whose head is in, or that is out of time: a request goes to a thread of
    /// its own, when one may be taken; a refusal is written at once (a small answer into an empty
    /// send buffer never blocks).
    private func finish(_ entry: Waiting, _ result: HeadResult) {
        let response: ServerResponse
        switch result {
        case .closed:
            closer.add(entry.connection)
            return
        case .timedOut:
            response = .error(408, "request-timeout", "the request did not arrive in time")
        case .tooLarge:
            response = .error(431, "request-too-large", "the request head is over \(limits.maximumHeadBytes) bytes")
        case .head(let head):
            switch ServerRequest.parse(head: head) {
            case .failure(let refusal):
                response = refusal
            case .success(let request):
                guard answering.take(below: limits.maximumConnections) else {
                    write(.error(503, "busy", "too many connections; try again"), to: entry.connection, waiting: false)
                    log(request, 503, since: entry.since)
                    closer.add(entry.connection)
                    return
                }
                Thread.detachNewThread { [self] in
                    let response = answer(request)
                    write(response, to: entry.connection)
                    log(request, response.status, since: entry.since)
                    closer.add(entry.connection)
                    answering.release()
                }
                return
            }
        }
        write(response, to: entry.connection, waiting: false)
        log(nil, response.status, since: entry.since)
        closer.add(entry.connection)
    }

    /// One access-log line; the method and path are the client's bytes, escaped by the log, so a
    /// forged line cannot be injected.
    private func log(_ request: ServerRequest?, _ status: Int, since: ContinuousClock.Instant) {
        let elapsed = (ContinuousClock.now - since).components
        let milliseconds = elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
        ServerLog.line("\(request?.method ?? "-") \(request?.path ?? "-") \(status) \(milliseconds) ms")
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

    /// A poll timeout in milliseconds until `instant` (rounded up, at most a second; -1 for none).
    private static func milliseconds(
        until instant: ContinuousClock.Instant?,
        from now: ContinuousClock.Instant
    ) -> Int32 {
        guard let instant else { return -1 }
        let (seconds, attoseconds) = (instant - now).components
        guard seconds < 1 else { return 1000 }
        return Int32(max(0, seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000))
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
