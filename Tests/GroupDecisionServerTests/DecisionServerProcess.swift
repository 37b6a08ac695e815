import Foundation
import ServingTestSupport
import Synchronization
import Testing

/// A running group-decision-server on 127.0.0.1, fetching from the fake App Store, stopped when
/// released: the one way these tests start the server, and (``exchange(_:)``) the one client
/// they ask it with, over a raw connection, so a test controls every byte it sends.
final class DecisionServerProcess: @unchecked Sendable {
    /// What happens to one of the server's output streams.
    enum Stream {
        /// Read all along, kept for the test.
        case collected
        /// A pipe of one page (on Linux) that nothing reads, until ``startReadingErrors()``.
        case unread
    }

    static let policies = TestFiles.packageRoot.appending(path: "Policies").path

    /// The App Store credentials the server reads from its environment, and where a coverage
    /// build's profile goes (so a coverage run counts what the server's own process runs).
    static let credentials = [
        "APP_STORE_KEY_ID": FakeAppStore.keyID, "APP_STORE_ISSUER_ID": FakeAppStore.issuerID,
        "APP_STORE_BUNDLE_ID": FakeAppStore.bundleID,
        "APP_STORE_PRIVATE_KEY_PATH": TestFiles.fixture("test-key.p8").path,
    ].merging(ProcessInfo.processInfo.environment.filter { $0.key == "LLVM_PROFILE_FILE" }) { $1 }

    let port: Int
    /// The fake App Store the server fetches from, whose log shows what went upstream.
    let appStore: FakeAppStore
    private let process: Process
    /// Standard output after the line saying where the server listens, and standard error.
    private let output: Collector
    private let errors: Collector
    /// How many lines of standard output ``outputLines(_:)`` has returned.
    private let outputTaken = Mutex(0)

    /// The built binary next to the test runner, or in the package's default build folder.
    static func binary() throws -> URL {
        let candidates = [
            Bundle.main.executableURL?.deletingLastPathComponent(),
            TestFiles.packageRoot.appending(path: ".build/debug"),
        ]
        .compactMap { $0?.appending(path: "group-decision-server") }
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return try #require(
            found,
            "build group-decision-server first (swift build); looked in \(candidates.map(\.path))"
        )
    }

    /// Starts a server on an ephemeral port of 127.0.0.1, serving `policies` and fetching from
    /// `appStore` (a namespace of its own when none is given).
    static func start(
        appStore: FakeAppStore? = nil,
        policies: String = policies,
        arguments: [String] = [],
        environment: [String: String] = [:],
        output: Stream = .collected,
        errors: Stream = .collected
    ) async throws -> DecisionServerProcess {
        let appStore = if let appStore { appStore } else { try await FakeAppStore() }
        let process = Process()
        process.executableURL = try binary()
        process.arguments =
            ["--port", "0", "--policies", policies, "--base-url", appStore.baseURL.absoluteString] + arguments
        process.environment = credentials.merging(environment) { _, new in new }
        process.standardInput = FileHandle.nullDevice
        let outputPipe = Pipe()
        let errorPipe = Pipe()
        process.standardOutput = outputPipe
        process.standardError = errorPipe
        if output == .unread || errors == .unread {
            // One page: a reader that stops reading is felt after a few lines.
            #if os(Linux)
            let setPipeSize: Int32 = 1031  // F_SETPIPE_SZ
            _ = fcntl(outputPipe.fileHandleForWriting.fileDescriptor, setPipeSize, 4096)
            _ = fcntl(errorPipe.fileHandleForWriting.fileDescriptor, setPipeSize, 4096)
            #endif
        }
        try process.run()
        let (port, rest) = try await offCooperativePool {
            try readPort(process, outputPipe, prefix: "group-decision-server listening on http://127.0.0.1:")
        }
        let server = DecisionServerProcess(
            port: port,
            appStore: appStore,
            process: process,
            output: Collector(outputPipe, rest),
            errors: Collector(errorPipe, [])
        )
        if output == .collected { server.output.start() }
        if errors == .collected { server.errors.start() }
        return server
    }

    private init(port: Int, appStore: FakeAppStore, process: Process, output: Collector, errors: Collector) {
        (self.port, self.appStore, self.process) = (port, appStore, process)
        (self.output, self.errors) = (output, errors)
    }

    /// Runs the server with `arguments` until it exits, for what it refuses at start.
    ///
    /// It runs under `timeout`, so a server that keeps running ends the test (status 124) rather
    /// than hanging it: within two minutes, for a machine busy with the rest of the suite (one CI
    /// run saw a server outlast 30 seconds; on an idle machine they stop within a second).
    static func runToExit(_ arguments: [String], environment: [String: String] = [:]) async throws -> ProcessResult {
        try await runProcess(
            URL(filePath: "/usr/bin/timeout"),
            ["120", try binary().path, "--port", "0"] + arguments,
            // The policies from the variable, which a test's --policies overrides.
            environment: credentials.merging(["GROUP_DECISION_SERVER_POLICIES": policies]) { $1 }
                .merging(environment) { _, new in new }
        )
    }

    /// Stops the server: SIGTERM, and SIGKILL if it is still running two seconds later.
    ///
    /// The two seconds are waited on a thread of their own: the last reference often goes on one
    /// of Swift's cooperative threads, which the tests waiting for I/O need.
    deinit {
        process.terminate()
        Thread.detachNewThread { [process] in
            for _ in 0..<200 where process.isRunning { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// Sends the server a signal (SIGTERM to stop it).
    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// The server's exit status once it has exited and all its output is read; `nil` if it still runs after `limit`.
    func exitStatus(within limit: Duration) async throws -> Int32? {
        let deadline = ContinuousClock.now + limit
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        guard !process.isRunning else { return nil }
        try await waitUntil { errors.isDone && output.isDone }
        return process.terminationStatus
    }

    /// The whole lines the server has logged (standard error) so far.
    func logLines() -> [String] { errors.lines }

    /// The first line of the log matching `condition`, once there is one.
    func logLine(where condition: (String) -> Bool) async throws -> String? {
        try await waitUntil { logLines().contains(where: condition) }
        return logLines().first(where: condition)
    }

    /// Starts (once) reading a standard error that was ``Stream/unread``.
    func startReadingErrors() { errors.start() }

    /// Waits for the next `count` lines of the server's standard output (with `--decision-log -`, its decision log).
    func outputLines(_ count: Int) async throws -> [String] {
        let taken = outputTaken.withLock { $0 }
        try await waitUntil { output.lines.count >= taken + count }
        let lines = Array(output.lines.dropFirst(taken).prefix(count))
        try #require(lines.count == count)
        outputTaken.withLock { $0 = taken + count }
        return lines
    }

    /// One answer, as it came.
    struct Answer {
        /// The whole answer: status line, header fields and body.
        var raw: String
        /// The `errno` that ended reading, when the connection was reset instead of answered.
        var error: Int32?
        var status: Int
        /// Header values by lowercased name.
        var headers: [String: String]
        /// The body.
        var text: String

        init(_ bytes: [UInt8], error: Int32?) {
            raw = String(decoding: bytes, as: UTF8.self)
            self.error = error
            let parsed = try? RawHTTP.parse(bytes)
            (status, headers, text) = (parsed?.status ?? 0, parsed?.headers ?? [:], parsed?.text ?? "")
        }

        var contentType: String? { headers["content-type"] }
        var retryAfter: String? { headers["retry-after"] }

        /// The Decision's JSON without the freshness keys the server appends.
        var decisionText: String {
            guard let range = text.range(of: #","groupsSource":""#, options: .backwards) else { return text }
            return text[..<range.lowerBound] + "}"
        }

        /// The `groupsSource` the server appended: `live`, `cache` or `stale`.
        var groupsSource: String? { DecisionServerProcess.field("groupsSource", in: text) }

        /// The `groupsFetchedAt` the server appended.
        var groupsFetchedAt: String? { DecisionServerProcess.field("groupsFetchedAt", in: text) }

        /// The `decisionId` the server appended.
        var decisionID: String? { DecisionServerProcess.field("decisionId", in: text) }
    }

    /// The last string member `name` of a JSON text, as written.
    static func field(_ name: String, in text: String) -> String? {
        guard let start = text.range(of: "\"\(name)\":\"", options: .backwards),
            let end = text[start.upperBound...].firstIndex(of: "\"")
        else { return nil }
        return String(text[start.upperBound..<end])
    }

    /// `GET path`.
    func get(_ path: String) async throws -> Answer {
        try await exchange("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    }

    /// `POST path`, without a body.
    func post(_ path: String) async throws -> Answer {
        try await exchange("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
    }

    /// Sends `request` as it is on a new connection and reads the answer: up to the end of its body (the connection may
    /// stay open for another request), or what came before the server closed or reset the connection.
    func exchange(_ request: String) async throws -> Answer {
        let port = port
        return try await offCooperativePool {
            let connection = try RawConnection(port: port)
            connection.send(Array(request.utf8))
            let (bytes, error) = connection.receive(until: RawHTTP.answerEnd)
            return Answer(bytes, error: error)
        }
    }
}

/// Bytes a thread of its own reads from a pipe until its end, once started.
private final class Collector: @unchecked Sendable {
    private let pipe: Pipe
    private let state: Mutex<(bytes: [UInt8], started: Bool, ended: Bool)>

    init(_ pipe: Pipe, _ initial: [UInt8]) {
        self.pipe = pipe
        state = Mutex((initial, false, false))
    }

    /// The whole lines read so far.
    var lines: [String] {
        let text = String(decoding: state.withLock { $0.bytes }, as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// Whether everything there is to read has been read: never started, or read to its end.
    var isDone: Bool { state.withLock { !$0.started || $0.ended } }

    func start() {
        let first = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        Thread.detachNewThread { [self] in
            let descriptor = pipe.fileHandleForReading.fileDescriptor
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    state.withLock { $0.bytes += chunk[..<count] }
                } else if count == 0 || errno != EINTR {
                    state.withLock { $0.ended = true }
                    return
                }
            }
        }
    }
}
