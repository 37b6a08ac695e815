import Foundation
import GroupPolicyBasics

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small HTTP/1.1 server on a POSIX socket bound to 127.0.0.1: one request per connection
/// (`Connection: close`), each connection on a thread of its own, everything bounded.
///
/// - At most ``Limits/maximumConnections`` connections are served at once; one more is answered
///   503 at once, so clients that connect and send nothing cannot queue the page's requests
///   behind them.
/// - The whole request (head and body) must arrive within ``Limits/timeout``, however slowly it
///   is dripped (408 otherwise), and the whole answer must be taken within as long again.
/// - A head may hold ``Limits/maximumHeadBytes`` (431 beyond), a body ``Limits/maximumBodyBytes``
///   (413, refused before it is read), and the bodies of all connections together
///   ``Limits/maximumBodyBytesInFlight`` (503 beyond), so memory stays bounded however many
///   clients send large requests at once.
///
/// It is the playground's only transport; what it answers is the handler's given to ``serve(_:)``.
final class HTTPServer: Sendable {
    /// What one connection, and all of them together, may cost.
    struct Limits: Sendable {
        /// Connections served at once.
        ///
        /// A browser opens a handful; the page sends five requests per edit.
        var maximumConnections = 32
        /// The request line and headers together: 16 KiB.
        var maximumHeadBytes = 16 << 10
        /// One request's body.
        var maximumBodyBytes: Int
        /// The bodies being read or answered, all connections together.
        var maximumBodyBytesInFlight: Int
        /// How long a request may take to arrive whole, and then its answer to be taken.
        var timeout: Duration = .seconds(10)
    }

    /// The port it listens on (the one the system chose for port 0).
    let port: Int
    private let socket: Int32
    private let limits: Limits
    /// Connections being served.
    private let connections = Locked(0)
    /// Bytes of the bodies being read or answered.
    private let bodyBytes = Locked(0)

    struct StartFailure: Error {
        var message: String
    }

    /// Binds 127.0.0.1:`port` (0: a free port the system picks) and listens.
    init(port: Int, limits: Limits) throws(StartFailure) {
        #if canImport(Glibc)
        let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw StartFailure(message: "cannot open a socket: \(Self.lastError())") }
        var reuse: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian  // 127.0.0.1, loopback only
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 128) == 0 else {
            let reason = Self.lastError()
            close(descriptor)
            throw StartFailure(message: "cannot listen on 127.0.0.1:\(port): \(reason)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        self.socket = descriptor
        self.limits = limits
    }

    /// Accepts connections until the process ends, answering each request with `handler`.
    func serve(_ handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) -> Never {
        while true {
            let descriptor = accept(socket, nil, nil)
            guard descriptor >= 0 else {
                // Out of descriptors, say: wait a moment rather than spin.
                if errno != EINTR { usleep(10_000) }
                continue
            }
            let connection = HTTPConnection(descriptor)
            guard connections.take(1, upTo: limits.maximumConnections) else {
                let busy = HTTPResponse.error(
                    "busy: \(limits.maximumConnections) connections are being served; try again",
                    status: .serviceUnavailable
                )
                connection.write(busy.serialized(), until: .now)
                close(descriptor)
                continue
            }
            let thread = Thread { [self] in
                serve(connection, handler)
                connections.release(1)
            }
            // The stack the command's main thread has: the handler parses and checks policies.
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    private func serve(_ connection: HTTPConnection, _ handler: @Sendable (HTTPRequest) -> HTTPResponse) {
        var reserved = 0
        defer { bodyBytes.release(reserved) }
        let response: HTTPResponse
        do throws(HTTPConnection.Failure) {
            let deadline = ContinuousClock.now + limits.timeout
            let (head, rest) = try connection.readHead(maximumBytes: limits.maximumHeadBytes, until: deadline)
            var request = try HTTPRequest.parseHead(head)
            let length = try request.bodyLength(maximum: limits.maximumBodyBytes)
            guard bodyBytes.take(length, upTo: limits.maximumBodyBytesInFlight) else {
                throw HTTPConnection.Failure(
                    status: .serviceUnavailable,
                    message: "busy: other requests hold \(limits.maximumBodyBytesInFlight) bytes at once; try again"
                )
            }
            reserved = length
            request.body = try connection.readBody(count: length, start: rest, until: deadline)
            response = handler(request)
        } catch {
            guard let status = error.status else {
                close(connection.descriptor)  // The peer left: nobody to answer.
                return
            }
            let message =
                status == .requestTimeout
                ? "the request did not arrive whole within \(limits.timeout.components.seconds) seconds"
                : error.message
            response = .error(message, status: status)
        }
        connection.write(response.serialized(), until: .now + limits.timeout)
        connection.finish()
    }

    private static func lastError() -> String {
        String(cString: strerror(errno))
    }
}

extension Locked<Int> {
    /// Adds `amount` to the count when it stays at most `limit`.
    fileprivate func take(_ amount: Int, upTo limit: Int) -> Bool {
        withLock { count in
            guard count + amount <= limit else { return false }
            count += amount
            return true
        }
    }

    fileprivate func release(_ amount: Int) {
        withLock { $0 -= amount }
    }
}
