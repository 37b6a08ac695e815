#if canImport(Glibc)
import AppStoreGroups
import GroupDecisions
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One address a host name resolved to, kept as bytes so that it outlives `getaddrinfo`'s list.
struct RedisSocketAddress: Sendable {
    var family: Int32
    var socketType: Int32
    var socketProtocol: Int32
    var bytes: [UInt8]
}

/// The few POSIX calls the Redis connections and their pool make, named apart from the methods
/// that would shadow them, with the platforms' differences in one place.
enum RedisSockets {
    /// The addresses of `host:port` for a TCP connection.
    ///
    /// - Parameters:
    ///   - host: A host name or address.
    ///   - port: The port.
    ///   - numericOnly: Refuse names, so that the call never waits on a resolver.
    /// - Returns: The addresses, or why there are none.
    static func resolve(host: String, port: Int, numericOnly: Bool) -> Result<[RedisSocketAddress], RedisFailure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        if numericOnly { hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV }
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            return .failure(RedisFailure("cannot resolve the host name"))
        }
        defer { freeaddrinfo(first) }
        var addresses: [RedisSocketAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let entry = next {
            next = entry.pointee.ai_next
            guard let address = entry.pointee.ai_addr else { continue }
            let bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(entry.pointee.ai_addrlen)))
            addresses.append(
                RedisSocketAddress(
                    family: entry.pointee.ai_family,
                    socketType: entry.pointee.ai_socktype,
                    socketProtocol: entry.pointee.ai_protocol,
                    bytes: bytes
                )
            )
        }
        guard !addresses.isEmpty else { return .failure(RedisFailure("cannot resolve the host name")) }
        return .success(addresses)
    }

    /// A non-blocking, close-on-exec TCP socket with Nagle off, connecting to `address`.
    ///
    /// - Returns: The descriptor and whether the connection is already made (it is usually still
    ///   in progress: wait for it to be writable, then call ``connectionError(_:)``).
    static func connect(to address: RedisSocketAddress) throws(RedisFailure) -> (descriptor: Int32, connected: Bool) {
        let descriptor = socket(address.family, address.socketType, address.socketProtocol)
        guard descriptor >= 0 else { throw RedisFailure("cannot open a socket: \(errorText())") }
        guard makeNonBlocking(descriptor) else {
            let text = errorText()
            closeDescriptor(descriptor)
            throw RedisFailure("cannot make the socket non-blocking: \(text)")
        }
        var one: Int32 = 1
        let size = socklen_t(MemoryLayout<Int32>.size)
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, size)
        #if canImport(Darwin)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, size)
        #endif
        let result = address.bytes.withUnsafeBytes { raw -> Int32 in
            guard let base = raw.baseAddress else { return -1 }
            let pointer = base.assumingMemoryBound(to: sockaddr.self)
            #if canImport(Darwin)
            return Darwin.connect(descriptor, pointer, socklen_t(raw.count))
            #elseif canImport(Glibc)
            return Glibc.connect(descriptor, pointer, socklen_t(raw.count))
            #else
            return Musl.connect(descriptor, pointer, socklen_t(raw.count))
            #endif
        }
        if result == 0 { return (descriptor, true) }
        if errno == EINPROGRESS || errno == EINTR { return (descriptor, false) }
        let text = errorText()
        closeDescriptor(descriptor)
        throw RedisFailure("cannot connect: \(text)")
    }

    /// The outcome of a connection attempt that was in progress, once the socket is writable.
    static func connectionError(_ descriptor: Int32) -> RedisFailure? {
        var socketError: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &socketError, &length) == 0 else {
            return RedisFailure("cannot connect: \(errorText())")
        }
        guard socketError == 0 else { return RedisFailure("cannot connect: \(String(cString: strerror(socketError)))") }
        return nil
    }

    /// Sends what the socket takes now; a negative count is `errno`'s failure.
    static func send(_ descriptor: Int32, _ bytes: ArraySlice<UInt8>) -> Int {
        bytes.withUnsafeBytes { raw in
            #if canImport(Darwin)
            Darwin.send(descriptor, raw.baseAddress, raw.count, 0)
            #elseif canImport(Glibc)
            Glibc.send(descriptor, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
            #else
            Musl.send(descriptor, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
            #endif
        }
    }

    /// Receives into `buffer`; a negative count is `errno`'s failure, 0 the end of the stream.
    static func receive(_ descriptor: Int32, into buffer: inout [UInt8], peek: Bool = false) -> Int {
        buffer.withUnsafeMutableBytes { raw in recv(descriptor, raw.baseAddress, raw.count, peek ? Int32(MSG_PEEK) : 0)
        }
    }

    /// Whether the last call failed only because it would have blocked (or was interrupted).
    static var wouldBlock: Bool { errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR }

    /// Whether the last call failed because the peer closed or reset the connection.
    static var connectionWasLost: Bool { errno == ECONNRESET || errno == EPIPE || errno == ENOTCONN }

    static func closeDescriptor(_ descriptor: Int32) {
        #if canImport(Darwin)
        _ = Darwin.close(descriptor)
        #elseif canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Musl.close(descriptor)
        #endif
    }

    /// A pipe whose two ends are non-blocking and close-on-exec: the pool's thread sleeps in
    /// `poll` on the read end; a byte written to the other wakes it.
    static func makePipe() -> (read: Int32, write: Int32)? {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        guard makeNonBlocking(ends[0]), makeNonBlocking(ends[1]) else {
            closeDescriptor(ends[0])
            closeDescriptor(ends[1])
            return nil
        }
        return (ends[0], ends[1])
    }

    /// Writes one byte to the pipe; a full pipe already holds a wake-up, so that is not an error.
    static func wake(_ descriptor: Int32) {
        var byte: UInt8 = 1
        _ = write(descriptor, &byte, 1)
    }

    /// Reads everything the pipe holds.
    static func drain(_ descriptor: Int32) {
        var buffer = [UInt8](repeating: 0, count: 256)
        while buffer.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Waits in `poll` for at most `milliseconds` (-1: no limit); interrupted waits count as none.
    static func poll(_ descriptors: inout [pollfd], milliseconds: Int32) -> Int32 {
        #if canImport(Darwin)
        let ready = Darwin.poll(&descriptors, nfds_t(descriptors.count), milliseconds)
        #elseif canImport(Glibc)
        let ready = Glibc.poll(&descriptors, nfds_t(descriptors.count), milliseconds)
        #else
        let ready = Musl.poll(&descriptors, nfds_t(descriptors.count), milliseconds)
        #endif
        return ready < 0 && errno == EINTR ? 0 : ready
    }

    /// Starts a detached thread running `body`.
    ///
    /// - Returns: Whether the thread started.
    static func startThread(_ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        #if canImport(Glibc)
        var thread = pthread_t()
        #else
        var thread: pthread_t?
        #endif
        // A C function pointer captures nothing: the body travels in `box`, retained until it runs.
        let status = pthread_create(&thread, nil, { RedisSockets.runThreadBody($0) }, box)
        #if canImport(Glibc)
        if status == 0 { pthread_detach(thread) }
        #else
        if status == 0, let thread { pthread_detach(thread) }
        #endif
        guard status == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(box).release()
            return false
        }
        return true
    }

    /// Runs and releases the body `startThread` retained (`raw` is never `nil`: it is the box).
    private static func runThreadBody(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
        guard let raw else { return nil }
        Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue().body()
        return nil
    }

    private final class ThreadBody: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    private static func makeNonBlocking(_ descriptor: Int32) -> Bool {
        let flags = fcntl(descriptor, F_GETFL, 0)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else { return false }
        return fcntl(descriptor, F_SETFD, FD_CLOEXEC) == 0
    }

    static func errorText() -> String {
        String(cString: strerror(errno))
    }
}
