import Foundation
import ServingTestSupport
import Testing

/// A `group-policy playground` process on a scratch copy of `Policies/` and `Examples/`, on a free
/// loopback port, stopped when the test is done with it.
///
/// Everything that blocks (starting it, a request) runs off Swift's cooperative threads, so that a
/// test waiting on the playground holds none of them from the package's other suites.
final class PlaygroundProcess: @unchecked Sendable {
    /// The scratch folder holding `Policies/` and `Examples/`; the process runs in it.
    let root: String
    let port: Int
    /// The first line the process printed.
    let firstLine: String
    private let process: Process
    /// Standard error's lines so far, read as they come.
    private let errorLines = LineLog()

    /// The policy directory's path.
    var policies: String { root + "/Policies" }

    /// Starts a playground on `Policies`, with `input` on its standard input.
    static func start(extraArguments: [String] = [], input: String = "") async throws -> PlaygroundProcess {
        try await offCooperativePool { try PlaygroundProcess(extraArguments: extraArguments, input: input) }
    }

    private init(extraArguments: [String], input: String) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("playground-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for folder in ["Policies", "Examples"] {
            try FileManager.default.copyItem(atPath: CLIRunner.packageRoot + "/" + folder, toPath: root + "/" + folder)
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: CLIRunner.binary)
        process.arguments = ["playground", "Policies", "--port", "0"] + extraArguments
        process.currentDirectoryURL = URL(fileURLWithPath: root)
        let output = Pipe()
        let errors = Pipe()
        let standardInput = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = standardInput
        try process.run()
        standardInput.fileHandleForWriting.write(Data(input.utf8))
        try standardInput.fileHandleForWriting.close()
        Thread { [errorLines] in
            var line: [UInt8] = []
            while let byte = try? errors.fileHandleForReading.read(upToCount: 1), !byte.isEmpty {
                guard byte != Data([10]) else {
                    errorLines.append(String(decoding: line, as: UTF8.self))
                    line = []
                    continue
                }
                line += byte
            }
        }
        .start()
        // The first line, byte by byte: nothing after it is read, and the process keeps serving.
        var line: [UInt8] = []
        let handle = output.fileHandleForReading
        while line.last != 10, let byte = try handle.read(upToCount: 1), !byte.isEmpty { line += byte }
        firstLine = String(decoding: line, as: UTF8.self)
        guard let match = firstLine.wholeMatch(of: /Playground at http:\/\/127\.0\.0\.1:(\d+)\/\n/),
            let port = Int(match.1)
        else {
            process.terminate()
            throw HarnessError(message: "the playground printed '\(firstLine)'")
        }
        self.port = port
    }

    deinit {
        // Not waited for: Foundation's `waitUntilExit` spins a run loop, and on one of Swift's
        // cooperative threads (where a test's last reference goes) it held the very threads the
        // exit's notification needed, so a busy run of many suites livelocked. Foundation reaps
        // the process when it exits.
        process.terminate()
        try? FileManager.default.removeItem(atPath: root)
    }

    /// The page's own origin.
    var origin: String { "http://127.0.0.1:\(port)" }

    /// The paths the page's scripts are served at: one per file of the playground's `Web/js`.
    static let scriptPaths: [String] = {
        let folder = CLIRunner.packageRoot + "/Sources/GroupPolicyPlayground/Web/js"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".js") }.sorted().map { "/js/" + $0 }
    }()

    /// The lines on standard error so far.
    var standardErrorLines: [String] { errorLines.lines }

    /// Sends one request with exactly these headers, and reads the answer.
    func send(
        _ method: String,
        _ path: String,
        headers: [String: String],
        body: [UInt8] = [],
        declaredLength: Int? = nil
    ) async throws -> RawHTTP.Answer {
        let bytes = RawHTTP.request(
            method: method,
            path: path,
            headers: headers,
            body: body,
            declaredLength: declaredLength
        )
        return try await offCooperativePool { [port] in try RawHTTP.exchange(port: port, bytes) }
    }

    /// A `POST` of a JSON object from the page's origin.
    func post(_ path: String, _ body: [String: Any], origin: String? = nil) async throws -> RawHTTP.Answer {
        try await send(
            "POST",
            path,
            headers: [
                "Host": "127.0.0.1:\(port)", "Origin": origin ?? self.origin, "Content-Type": "application/json",
            ],
            body: [UInt8](try JSONSerialization.data(withJSONObject: body))
        )
    }

    /// A `GET` naming this playground in `Host`.
    func get(_ path: String) async throws -> RawHTTP.Answer {
        try await send("GET", path, headers: ["Host": "127.0.0.1:\(port)"])
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

    /// Each policy file's version as `GET /api/files` gives it to a page that loads now.
    func versions() async throws -> [String: String] {
        let files = try #require(try await get("/api/files").json()["files"] as? [[String: String]])
        return Dictionary(
            uniqueKeysWithValues: files.compactMap { file in file["name"].map { ($0, file["version"] ?? "") } }
        )
    }

    /// The text of a policy file on disk.
    func policyText(_ name: String) throws -> String {
        try String(contentsOfFile: policies + "/" + name, encoding: .utf8)
    }
}

/// One textual edit of a policy file of the scratch copy.
struct Edit: Sendable {
    var file: String
    var old: String
    var new: String

    /// The `files` member of a request holding the edit.
    func files(in playground: PlaygroundProcess) throws -> [String: String] {
        [file: try text(in: playground)]
    }

    /// The file's text with the edit made.
    func text(in playground: PlaygroundProcess) throws -> String {
        let saved = try playground.policyText(file)
        guard saved.contains(old) else { throw HarnessError(message: "\(file) does not contain \(old)") }
        return saved.replacingOccurrences(of: old, with: new)
    }
}

/// Lines another thread appends to.
private final class LineLog: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    func append(_ line: String) {
        lock.lock()
        stored.append(line)
        lock.unlock()
    }

    var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}
