import Foundation

/// HTTP/1.1 over a plain socket.
///
/// A test controls every header (`Host` included) and every byte's timing, and sees the answer's status and headers as
/// sent. Blocking: call it off Swift's cooperative threads (the playground tests' harnesses do).
package enum RawHTTP {
    package struct Answer {
        package var status: Int
        /// Header values by lowercased name.
        package var headers: [String: String]
        package var body: [UInt8]

        package var text: String { String(decoding: body, as: UTF8.self) }

        /// The body as a JSON object.
        package func json() throws -> [String: Any] {
            guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                throw HarnessError(message: "not a JSON object: \(text)")
            }
            return object
        }

        /// The `error` member of a JSON answer.
        package func error() throws -> String? {
            try json()["error"] as? String
        }
    }

    /// The bytes of a request: its line, the headers in name order, `Content-Length` for a `POST`
    /// (or the `declaredLength` given), and the body.
    package static func request(
        method: String,
        path: String,
        headers: [String: String],
        body: [UInt8] = [],
        declaredLength: Int? = nil
    ) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        if method == "POST" || declaredLength != nil { head += "Content-Length: \(declaredLength ?? body.count)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    /// Sends raw bytes on a new connection and reads the answer until the server closes it.
    package static func exchange(port: Int, _ bytes: [UInt8]) throws -> Answer {
        let connection = try RawConnection(port: port)
        connection.send(bytes)
        return try connection.answer()
    }

    /// Where the first whole answer in `bytes` ends (head, then `Content-Length` body bytes); `nil` until it has come.
    package static func answerEnd(_ bytes: [UInt8]) -> Int? {
        guard let blank = bytes.indices.first(where: { bytes[$0...].starts(with: [13, 10, 13, 10]) }) else {
            return nil
        }
        let head = String(decoding: bytes[..<blank], as: UTF8.self).lowercased()
        guard let field = head.range(of: "\r\ncontent-length: ") else { return nil }
        let digits = head[field.upperBound...].prefix { $0.isNumber }
        guard let length = Int(digits), bytes.count >= blank + 4 + length else { return nil }
        return blank + 4 + length
    }

    package static func parse(_ bytes: [UInt8]) throws -> Answer {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else {
            throw HarnessError(message: "no HTTP answer: \(String(decoding: bytes, as: UTF8.self))")
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw HarnessError(message: "no status line: \(lines[0])")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces
            )
        }
        return Answer(status: status, headers: headers, body: Array(bytes[(end + 4)...]))
    }
}

/// One connection to 127.0.0.1 that a test feeds by hand (a slow or silent client), closed when released.
package final class RawConnection: @unchecked Sendable {
    package let descriptor: Int32

    /// Connects to 127.0.0.1.
    ///
    /// A read waits at most `readTimeout` seconds for each chunk of the answer. With `receiveBuffer`,
    /// the socket's receive buffer is that many bytes (a small one makes a slow reader).
    package init(port: Int, readTimeout: Int = 60, receiveBuffer: Int32? = nil) throws {
        let connected = LoopbackSocket.dial(port) { descriptor in
            if var size = receiveBuffer {
                setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
            var timeout = timeval(tv_sec: readTimeout, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        guard let connected else { throw HarnessError(message: "cannot connect to 127.0.0.1:\(port)") }
        descriptor = connected
    }

    deinit {
        close(descriptor)
    }

    /// Sends what the server takes; false when it no longer takes anything (it answered and closed,
    /// perhaps before reading everything).
    @discardableResult
    package func send(_ bytes: [UInt8]) -> Bool { LoopbackSocket.transmit(bytes, on: descriptor) }

    /// Reads until the server closes the connection, and parses the answer.
    package func answer() throws -> RawHTTP.Answer {
        try RawHTTP.parse(receive { _ in nil }.bytes)
    }

    /// Reads until `end` finds where what was received ends (the rest of the connection is left
    /// unread), or the server closes the connection, or reading fails.
    ///
    /// - Returns: What came up to that end, and the `errno` that ended reading when it failed
    ///   (`ECONNRESET` for a reset) instead of coming to an end or a close.
    package func receive(until end: ([UInt8]) -> Int?) -> (bytes: [UInt8], error: Int32?) {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                received += chunk[0..<count]
                if let index = end(received) { return (Array(received[..<index]), nil) }
            } else if count == 0 {
                return (received, nil)
            } else if errno != EINTR {
                return (received, errno)
            }
        }
    }

    /// Whether the server has sent anything or closed the connection yet, without waiting.
    package var isAnswered: Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) > 0
    }
}

/// A harness or test server that could not do what a test asked of it.
package struct HarnessError: Error, CustomStringConvertible {
    package var message: String
    package var description: String { message }

    package init(message: String) {
        self.message = message
    }
}
