#if canImport(Glibc)
import CEpoll
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few socket and thread calls the loops make, the platforms' differences in one place.
enum Sockets {
    struct Failure: Error {
        var message: String
    }

    /// A listening IPv4 socket, non-blocking, with the longest accept queue the system allows (a
    /// burst of connections waits there instead of having its SYNs dropped and retried a second
    /// later); returns it and the port it listens on (the one the system chose for port 0).
    static func listen(host: String, port: Int) throws(Failure) -> (descriptor: Int32, port: Int) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        guard let portNumber = UInt16(exactly: port), inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw Failure(message: "cannot listen on \(host):\(port): give an IPv4 address and a port")
        }
        address.sin_port = in_port_t(portNumber.bigEndian)
        #if canImport(Glibc)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let listener = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard listener >= 0 else { throw Failure(message: "cannot open a socket: \(lastError())") }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, startListening(listener), setNonBlocking(listener) else {
            let error = lastError()
            close(listener)
            throw Failure(message: "cannot listen on \(host):\(port): \(error)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        return (listener, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// An accepted connection, non-blocking, with Nagle's delay off (an answer is one write, and a
    /// kept-alive connection's next answer must not wait for the previous one's acknowledgement);
    /// or the errno that stopped accepting.
    static func accept(_ listener: Int32) -> Result<Int32, Errno> {
        #if canImport(Glibc)
        let connection = group_policy_accept_nonblocking(listener)
        #else
        let connection = Darwin.accept(listener, nil, nil)
        #endif
        guard connection >= 0 else { return .failure(Errno(errno)) }
        #if !canImport(Glibc)
        _ = setNonBlocking(connection)
        var noSignal: Int32 = 1
        setsockopt(connection, SOL_SOCKET, SO_NOSIGPIPE, &noSignal, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var yes: Int32 = 1
        setsockopt(connection, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        return .success(connection)
    }

    struct Errno: Error {
        var code: Int32

        init(_ code: Int32) {
            self.code = code
        }

        var wouldBlock: Bool { code == EAGAIN || code == EWOULDBLOCK }
    }

    private static func startListening(_ descriptor: Int32) -> Bool {
        #if canImport(Glibc)
        Glibc.listen(descriptor, 4096) == 0
        #else
        Darwin.listen(descriptor, 4096) == 0
        #endif
    }

    @discardableResult
    static func setNonBlocking(_ descriptor: Int32) -> Bool {
        fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) == 0
    }

    /// Receives without waiting: the count, 0 when the peer closed, -1 with `errno` otherwise.
    static func receive(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        recv(descriptor, buffer.baseAddress, buffer.count, 0)
    }

    /// Sends without raising SIGPIPE when the peer is gone.
    static func send(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        #if canImport(Glibc)
        Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
        #else
        Darwin.send(descriptor, bytes.baseAddress, bytes.count, 0)
        #endif
    }

    /// Raises the soft limit of open files to the hard one, as servers do: waiting, answering and
    /// draining connections each hold a descriptor, over the soft limit of 1,024 many systems
    /// start a process with.
    static func raiseDescriptorLimit() {
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

    static func lastError() -> String {
        String(cString: strerror(errno))
    }

    /// Starts a thread of its own running `body`, with a stack of `stackSize` bytes.
    static func spawnThread(stackSize: Int = 1 << 20, _ body: @escaping @Sendable () -> Void) {
        final class Box {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, stackSize)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        #if canImport(Glibc)
        var thread = pthread_t()
        #else
        var thread: pthread_t?
        #endif
        let started = pthread_create(
            &thread,
            &attributes,
            { pointer in
                #if canImport(Glibc)
                guard let pointer else { return nil }
                #endif
                Unmanaged<Box>.fromOpaque(pointer).takeRetainedValue().body()
                return nil
            },
            box
        )
        if started != 0 {
            // No thread: run it here rather than lose it.
            Unmanaged<Box>.fromOpaque(box).takeRetainedValue().body()
        }
    }
}
