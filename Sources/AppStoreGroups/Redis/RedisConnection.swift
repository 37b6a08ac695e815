#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One TCP connection to Redis speaking RESP2, with a deadline on connecting, sending and every
/// reply.
///
/// Blocking calls on a non-blocking socket, each waiting with `poll` for at most the time left.
/// Not thread-safe: ``RedisGroupsCache`` hands each connection to one caller at a time, and closes
/// it after any failure (a late reply must never be read as the answer to the next command). That
/// one-owner-at-a-time rule is what makes it safe to hand between threads.
final class RedisConnection: @unchecked Sendable {
    private var descriptor: Int32
    private var buffer: [UInt8] = []
    private let parser: RESPParser

    /// Connects to `host:port` within `timeout`.
    init(host: String, port: Int, timeout: Duration, maximumValueBytes: Int) throws(RedisFailure) {
        parser = RESPParser(maximumBulkBytes: maximumValueBytes, maximumArrayCount: 100_000)
        let deadline = ContinuousClock.now + timeout
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw RedisFailure("cannot resolve \(host)")
        }
        defer { freeaddrinfo(first) }
        var lastError = "no address"
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let address = candidate {
            candidate = address.pointee.ai_next
            let socketDescriptor = socket(address.pointee.ai_family, address.pointee.ai_socktype, 0)
            guard socketDescriptor >= 0 else {
                lastError = Self.errorText()
                continue
            }
            do {
                try Self.configure(socketDescriptor)
                try Self.connect(socketDescriptor, to: address.pointee, deadline: deadline)
                descriptor = socketDescriptor
                return
            } catch {
                lastError = error.message
                close(socketDescriptor)
            }
        }
        throw RedisFailure("cannot connect to \(host):\(port): \(lastError)")
    }

    deinit {
        close(descriptor)
    }

    /// Whether every byte the server sent has been read as a reply: a connection holding more
    /// (a reply nobody asked for) would answer the next command with it, so it is not reused.
    var isClean: Bool { buffer.isEmpty }

    /// Sends one command and reads its reply, all before `deadline`.
    func send(_ arguments: [[UInt8]], deadline: ContinuousClock.Instant) throws(RedisFailure) -> RESPReply {
        try write(RESPReply.command(arguments), deadline: deadline)
        return try readReply(deadline: deadline)
    }

    private func write(_ bytes: [UInt8], deadline: ContinuousClock.Instant) throws(RedisFailure) {
        var offset = 0
        while offset < bytes.count {
            try Self.wait(for: descriptor, events: Int16(POLLOUT), until: deadline, doing: "sending")
            let sent = bytes[offset...].withUnsafeBytes { raw in
                #if canImport(Darwin)
                Darwin.send(descriptor, raw.baseAddress, raw.count, 0)
                #else
                Self.sendNoSignal(descriptor, raw.baseAddress, raw.count)
                #endif
            }
            if sent < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                throw RedisFailure("sending failed: \(Self.errorText())")
            }
            offset += sent
        }
    }

    private func readReply(deadline: ContinuousClock.Instant) throws(RedisFailure) -> RESPReply {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            do {
                if let (reply, length) = try parser.parse(buffer[...]) {
                    buffer.removeFirst(length)
                    return reply
                }
            } catch {
                switch error {
                case .malformed(let why): throw RedisFailure("the server's reply is not RESP: \(why)")
                case .tooLarge(let why): throw RedisFailure("the server's reply is too large: \(why)")
                }
            }
            try Self.wait(for: descriptor, events: Int16(POLLIN), until: deadline, doing: "waiting for a reply")
            let received = chunk.withUnsafeMutableBytes { raw in recv(descriptor, raw.baseAddress, raw.count, 0) }
            if received == 0 { throw RedisFailure("the server closed the connection") }
            if received < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                throw RedisFailure("receiving failed: \(Self.errorText())")
            }
            buffer += chunk[0..<received]
        }
    }

    // MARK: Sockets

    #if !canImport(Darwin)
    private static func sendNoSignal(_ descriptor: Int32, _ pointer: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.send(descriptor, pointer, count, Int32(MSG_NOSIGNAL))
        #else
        Musl.send(descriptor, pointer, count, Int32(MSG_NOSIGNAL))
        #endif
    }
    #endif

    private static func configure(_ descriptor: Int32) throws(RedisFailure) {
        let flags = fcntl(descriptor, F_GETFL, 0)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw RedisFailure("cannot make the socket non-blocking: \(errorText())")
        }
        var one: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    private static func connect(
        _ descriptor: Int32,
        to address: addrinfo,
        deadline: ContinuousClock.Instant
    ) throws(RedisFailure) {
        #if canImport(Darwin)
        let result = Darwin.connect(descriptor, address.ai_addr, address.ai_addrlen)
        #elseif canImport(Glibc)
        let result = Glibc.connect(descriptor, address.ai_addr, address.ai_addrlen)
        #else
        let result = Musl.connect(descriptor, address.ai_addr, address.ai_addrlen)
        #endif
        if result == 0 { return }
        guard errno == EINPROGRESS || errno == EINTR else { throw RedisFailure(errorText()) }
        try wait(for: descriptor, events: Int16(POLLOUT), until: deadline, doing: "connecting")
        var socketError: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &socketError, &length) == 0 else {
            throw RedisFailure(errorText())
        }
        guard socketError == 0 else { throw RedisFailure(String(cString: strerror(socketError))) }
    }

    /// Waits until the socket is ready for `events`, or throws when `deadline` passes first.
    private static func wait(
        for descriptor: Int32,
        events: Int16,
        until deadline: ContinuousClock.Instant,
        doing what: String
    ) throws(RedisFailure) {
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { throw RedisFailure("timed out \(what)", isTimeout: true) }
            let (seconds, attoseconds) = left.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var descriptors = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&descriptors, 1, milliseconds)
            if ready > 0 {
                if descriptors.revents & Int16(POLLNVAL) != 0 { throw RedisFailure("the socket is closed") }
                return
            }
            if ready < 0, errno != EINTR { throw RedisFailure("poll failed: \(errorText())") }
        }
    }

    private static func errorText() -> String {
        String(cString: strerror(errno))
    }
}

/// Why a Redis call failed.
struct RedisFailure: Error {
    var message: String
    var isTimeout: Bool

    init(_ message: String, isTimeout: Bool = false) {
        self.message = message
        self.isTimeout = isTimeout
    }
}
