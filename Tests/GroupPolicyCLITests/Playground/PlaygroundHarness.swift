import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `group-policy playground` process on a scratch copy of `Policies/` and `Examples/`, on a free
/// loopback port, stopped when the test is done with it.
final class PlaygroundProcess {
    /// The scratch folder holding `Policies/` and `Examples/`; the process runs in it.
    let root: String
    let port: Int
    /// The first line the process printed.
    let firstLine: String
    private let process: Process

    /// The policy directory's path.
    var policies: String { root + "/Policies" }

    init(extraArguments: [String] = []) throws {
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("playground-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for folder in ["Policies", "Examples"] {
            try FileManager.default.copyItem(atPath: CLIRunner.packageRoot + "/" + folder, toPath: root + "/" + folder)
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: CLIRunner.binary)
        process.arguments = ["playground", "Policies", "--port", "0"] + extraArguments
        process.currentDirectoryURL = URL(fileURLWithPath: root)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line, byte by byte: nothing after it is read, and the process keeps serving.
        var line: [UInt8] = []
        let handle = output.fileHandleForReading
        while line.last != 10, let byte = try handle.read(upToCount: 1), !byte.isEmpty { line += byte }
        firstLine = String(decoding: line, as: UTF8.self)
        guard let match = firstLine.wholeMatch(of: /Playground at http:\/\/127\.0\.0\.1:(\d+)\/\n/), let port = Int(match.1) else {
            process.terminate()
            throw HarnessError(message: "the playground printed '\(firstLine)'")
        }
        self.port = port
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: root)
    }

    /// The page's own origin.
    var origin: String { "http://127.0.0.1:\(port)" }

    /// A `POST` of a JSON object from the page's origin.
    func post(_ path: String, _ body: [String: Any], origin: String? = nil) throws -> RawHTTP.Answer {
        let data = try JSONSerialization.data(withJSONObject: body)
        return try RawHTTP.send(
            port: port,
            method: "POST",
            path: path,
            headers: ["Host": "127.0.0.1:\(port)", "Origin": origin ?? self.origin, "Content-Type": "application/json"],
            body: [UInt8](data)
        )
    }

    /// A `GET` naming this playground in `Host`.
    func get(_ path: String) throws -> RawHTTP.Answer {
        try RawHTTP.send(port: port, method: "GET", path: path, headers: ["Host": "127.0.0.1:\(port)"])
    }

    /// A request body with the bundled response of `Examples/` named `example`.
    func customer(_ example: String, entitlements: [String] = [], environment: String? = nil) throws -> [String: Any] {
        var body: [String: Any] = [
            "response": try String(contentsOfFile: root + "/Examples/" + example, encoding: .utf8),
            "entitlements": entitlements,
        ]
        body["environment"] = environment
        return body
    }

    /// The text of a policy file on disk.
    func policyText(_ name: String) throws -> String {
        try String(contentsOfFile: policies + "/" + name, encoding: .utf8)
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// HTTP/1.1 over a plain socket, so that a test controls every header (`Host` included) and sees
/// the answer's status and headers as sent.
enum RawHTTP {
    struct Answer {
        var status: Int
        /// Header values by lowercased name.
        var headers: [String: String]
        var body: [UInt8]

        var text: String { String(decoding: body, as: UTF8.self) }

        /// The body as a JSON object.
        func json() throws -> [String: Any] {
            guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                throw HarnessError(message: "not a JSON object: \(text)")
            }
            return object
        }
    }

    static func send(
        port: Int,
        method: String,
        path: String,
        headers: [String: String],
        body: [UInt8] = [],
        declaredLength: Int? = nil
    ) throws -> Answer {
        var head = "\(method) \(path) HTTP/1.1\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        if method == "POST" || declaredLength != nil { head += "Content-Length: \(declaredLength ?? body.count)\r\n" }
        head += "\r\n"
        return try exchange(port: port, Array(head.utf8) + body)
    }

    /// Sends raw bytes and reads the answer until the server closes the connection.
    static func exchange(port: Int, _ bytes: [UInt8]) throws -> Answer {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw HarnessError(message: "socket failed") }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw HarnessError(message: "cannot connect to 127.0.0.1:\(port)") }
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { buffer in
                buffer.baseAddress.map { write(descriptor, $0 + offset, buffer.count - offset) } ?? -1
            }
            guard sent > 0 else { break }  // The server may refuse before reading everything.
            offset += sent
        }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            received += chunk[0..<count]
        }
        return try parse(received)
    }

    private static func parse(_ bytes: [UInt8]) throws -> Answer {
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
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Answer(status: status, headers: headers, body: Array(bytes[(end + 4)...]))
    }
}
