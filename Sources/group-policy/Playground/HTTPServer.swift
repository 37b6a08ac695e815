import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small HTTP/1.1 server on a POSIX socket bound to 127.0.0.1: one request per connection
/// (`Connection: close`), each connection on a thread of its own, a few at a time, every read
/// bounded in bytes and time.
///
/// It is the playground's only transport; what it answers is the handler's given to ``serve(_:)``.
final class HTTPServer: Sendable {
    /// The port it listens on (the one the system chose for port 0).
    let port: Int
    private let socket: Int32
    private let maximumBodyBytes: Int
    /// Connections served at once; more wait in the listen queue. A browser keeps a spare
    /// connection or two open unused, so this is more than one.
    private let slots = DispatchSemaphore(value: 8)

    /// How long a connection may take to send its request, and to take the answer: 10 seconds.
    static let timeoutSeconds = 10

    struct StartFailure: Error {
        var message: String
    }

    /// Binds 127.0.0.1:`port` (0: a free port the system picks) and listens.
    init(port: Int, maximumBodyBytes: Int) throws(StartFailure) {
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
        guard bound == 0, listen(descriptor, 64) == 0 else {
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
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// Accepts connections until the process ends, answering each request with `handler`.
    func serve(_ handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) -> Never {
        while true {
            slots.wait()
            let connection = accept(socket, nil, nil)
            guard connection >= 0 else {
                slots.signal()
                continue
            }
            Thread { [self] in
                serve(connection, handler)
                close(connection)
                slots.signal()
            }
            .start()
        }
    }

    private func serve(_ connection: Int32, _ handler: @Sendable (HTTPRequest) -> HTTPResponse) {
        var timeout = timeval(tv_sec: Self.timeoutSeconds, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let response: HTTPResponse
        do {
            response = handler(try read(connection))
        } catch {
            guard let status = error.status else { return }  // The peer left: nobody to answer.
            response = .error(error.message, status: status)
        }
        send(response.serialized(), to: connection)
    }

    /// Why reading a request stopped: a refusal to answer, or a peer that left (`status` nil).
    private struct ReadFailure: Error {
        var status: HTTPStatus?
        var message: String
    }

    /// Reads one request: its head up to the blank line, then exactly `Content-Length` bytes.
    private func read(_ connection: Int32) throws(ReadFailure) -> HTTPRequest {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            let count = try receive(connection, into: &chunk)
            let searchFrom = max(0, buffer.count - 3)
            buffer += chunk[0..<count]
            headEnd = Self.find(separator, in: buffer, from: searchFrom)
            if headEnd == nil, buffer.count > HTTPRequest.maximumHeaderBytes {
                throw ReadFailure(
                    status: .headerFieldsTooLarge,
                    message: "request head over the limit of \(HTTPRequest.maximumHeaderBytes) bytes"
                )
            }
        }
        let end = headEnd ?? 0
        guard end <= HTTPRequest.maximumHeaderBytes else {
            throw ReadFailure(
                status: .headerFieldsTooLarge,
                message: "request head over the limit of \(HTTPRequest.maximumHeaderBytes) bytes"
            )
        }
        var request: HTTPRequest
        let length: Int
        do {
            request = try HTTPRequest.parseHead(Array(buffer[0..<end]))
            length = try request.bodyLength(maximum: maximumBodyBytes)
        } catch {
            throw ReadFailure(status: error.status, message: error.message)
        }
        var body = Array(buffer[(end + 4)...].prefix(length))
        body.reserveCapacity(length)
        while body.count < length {
            let count = try receive(connection, into: &chunk)
            body += chunk[0..<min(count, length - body.count)]
        }
        request.body = body
        return request
    }

    /// Receives some bytes; the peer closing or a timeout ends the request.
    private func receive(_ connection: Int32, into chunk: inout [UInt8]) throws(ReadFailure) -> Int {
        let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
        if count > 0 { return count }
        if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
            throw ReadFailure(status: .requestTimeout, message: "the request took over \(Self.timeoutSeconds) seconds")
        }
        throw ReadFailure(status: nil, message: "the peer closed the connection")
    }

    private func send(_ bytes: [UInt8], to connection: Int32) {
        var offset = 0
        while offset < bytes.count {
            // The playground ignores SIGPIPE, so a peer gone away is a failed send, not an exit.
            let sent = bytes.withUnsafeBytes { buffer in
                buffer.baseAddress.map { Foundation.send(connection, $0 + offset, buffer.count - offset, 0) } ?? -1
            }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = start
        while index + needle.count <= haystack.count {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return index
            }
            index += 1
        }
        return nil
    }

    private static func lastError() -> String {
        String(cString: strerror(errno))
    }
}
