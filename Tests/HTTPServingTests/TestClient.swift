import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One client connection that reads answers one at a time by their `Content-Length`.
///
/// A test sees what a kept-alive connection does. Each read is bounded by two minutes: a busy
/// machine once took more than 60 s to bring a request to its server (ten seconds failed the
/// test), and a server that never answers fails each case within the bound.
final class TestClient: @unchecked Sendable {
    /// -1 once ``reset()`` has closed it.
    private(set) var descriptor: Int32
    private var buffered: [UInt8] = []
    /// The server, kept running while a client of it lives (its release stops it).
    private let server: HTTPServerTests.Running

    convenience init(_ server: HTTPServerTests.Running) throws {
        try self.init(port: server.port, server: server)
    }

    struct Answer {
        /// The status line as it came.
        var statusLine: String
        var status: Int
        var headers: [String: String]
        var body: String
    }

    struct Failure: Error {
        var message: String
    }

    /// Connects (off Swift's cooperative threads, like every blocking call here: a test blocking
    /// them would starve the handlers' tasks).
    static func connect(_ server: HTTPServerTests.Running) async throws -> TestClient {
        try await offCooperativePool { try TestClient(server) }
    }

    private init(port: Int, server: HTTPServerTests.Running) throws {
        self.server = server
        #if canImport(Glibc)
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                systemConnect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw Failure(message: "cannot connect")
        }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        #if canImport(Glibc)
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        #else
        _ = bytes.withUnsafeBytes { Darwin.send(descriptor, $0.baseAddress, $0.count, 0) }
        #endif
    }

    /// The next answer.
    ///
    /// - Parameter headOnly: Whether the answer is one to `HEAD`: its head alone, whatever its
    ///   `Content-Length` says (RFC 9112, section 6.3).
    /// - Returns: The answer's status line, fields and body.
    /// - Throws: When the server closes first, or nothing comes within two minutes.
    func answer(headOnly: Bool = false) async throws -> Answer {
        try await offCooperativePool { try self.nextAnswer(headOnly: headOnly) }
    }

    /// Closes the connection with a reset (`SO_LINGER` of zero), as a client that crashed does.
    func reset() {
        var abort = linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
        close(descriptor)
        descriptor = -1
    }

    /// Whether the server closed the connection (reading returns end of file) within two minutes.
    func isClosedByServer() async -> Bool {
        (try? await offCooperativePool { self.readsEndOfFile() }) ?? false
    }

    private func nextAnswer(headOnly: Bool) throws -> Answer {
        while true {
            if let end = buffered.indices.first(where: { buffered[$0...].starts(with: [13, 10, 13, 10]) }) {
                let head = String(decoding: buffered[..<end], as: UTF8.self).components(separatedBy: "\r\n")
                var headers: [String: String] = [:]
                for line in head.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                        .trimmingCharacters(in: .whitespaces)
                }
                let length = headOnly ? 0 : Int(headers["content-length"] ?? "0") ?? 0
                if buffered.count >= end + 4 + length {
                    let body = String(decoding: buffered[(end + 4)..<(end + 4 + length)], as: UTF8.self)
                    buffered.removeSubrange(..<(end + 4 + length))
                    let status = Int(head[0].split(separator: " ")[1]) ?? 0
                    return Answer(statusLine: head[0], status: status, headers: headers, body: body)
                }
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw Failure(message: "closed after \(buffered.count) bytes") }
            buffered += chunk[..<count]
        }
    }

    private func readsEndOfFile() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { return true }
            if count < 0 { return false }
        }
    }
}

/// Runs blocking work on a thread of its own.
func offCooperativePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

private func systemConnect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    #if canImport(Glibc)
    Glibc.connect(descriptor, address, length)
    #else
    Darwin.connect(descriptor, address, length)
    #endif
}
