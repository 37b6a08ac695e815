import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy
import GroupPolicyBasics
import ServingTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// group-decision-server's logs when their readers stall or their files misbehave: logging never
/// holds an answer or a connection, and what is lost is counted in a line.
@Suite("Decision server: logs")
struct DecisionServerLogTests {
    static let salt = "a salt of sixteen bytes or more"

    @Test(
        "--decision-log - with a standard output nobody reads: every request is answered and closed; drops are one line",
        .requires(.pythonCryptography),
        .timeLimit(.minutes(3))
    )
    func unreadStandardOutput() async throws {
        let store = try await FakeAppStore()
        let server = try await StalledLogServer.start(
            appStore: store,
            arguments: ["--decision-log", "-", "--log-buffer", "4096"],
            environment: ["DECISION_LOG_SALT": Self.salt],
            output: .unread,
            errors: .collected
        )
        // A 4 KiB pipe and a 4 KiB buffer hold about 25 records. Before the log had a buffer, the
        // decisions blocked in write() on Swift's few cooperative threads once the pipe was full,
        // and every later request, a 404 too, was answered 504 after 30 seconds.
        var answered = 0
        for index in 0..<200 {
            let path = index % 10 == 9 ? "/nope" : "/decision?transactionId=ok1"
            let answer = try await RawConnection.exchange(port: server.port, "GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
            let expected = index % 10 == 9 ? "HTTP/1.1 404 Not Found\r\n" : "HTTP/1.1 200 OK\r\n"
            guard answer.error == nil, answer.text.hasPrefix(expected) else {
                Issue.record(
                    "request \(index) got \(answer.text.prefix(40).debugDescription), error \(answer.error ?? 0)"
                )
                break
            }
            answered += 1
        }
        #expect(answered == 200)
        let report = try await server.errorLine { $0.hasPrefix("decision log: ") }
        let dropped = try #require(report.flatMap { Self.count(in: $0, before: " record") })
        #expect((1...180).contains(dropped), "\(report ?? "")")
        #expect(report?.hasSuffix(" dropped (its reader does not keep up)") == true)
    }

    @Test(
        "a standard error nobody reads: connections still close and new ones are served; drops are one line",
        .requires(.pythonCryptography),
        .timeLimit(.minutes(3))
    )
    func unreadStandardError() async throws {
        let store = try await FakeAppStore()
        let server = try await StalledLogServer.start(
            appStore: store,
            arguments: ["--max-connections", "4", "--log-buffer", "4096"],
            output: .collected,
            errors: .unread
        )
        // About 90 access-log lines fill the 4 KiB pipe. Before the log had a buffer, each later
        // connection's thread blocked in write() after its answer, never closed its connection,
        // and held its slot: after four of them every new connection was answered 503.
        var answered = 0
        for index in 0..<300 {
            let answer = try await RawConnection.exchange(port: server.port, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
            guard answer.error == nil, answer.text.hasPrefix("HTTP/1.1 404 Not Found\r\n") else {
                Issue.record(
                    "request \(index) got \(answer.text.prefix(40).debugDescription), error \(answer.error ?? 0)"
                )
                break
            }
            answered += 1
        }
        #expect(answered == 300)
        // The report is queued beyond the buffer, so it arrives once standard error is read again.
        server.startReadingErrors()
        let report = try await server.errorLine { $0.hasPrefix("log: ") }
        let dropped = try #require(report.flatMap { Self.count(in: $0, before: " line") })
        #expect((1...300).contains(dropped), "\(report ?? "")")
        let accessLines = server.errorLines().filter { $0.hasPrefix("GET /nope 404 ") }
        #expect(accessLines.count + dropped <= 300)
        #expect(accessLines.allSatisfy { $0.hasSuffix(" ms") })
    }

    @Test("--decision-log /dev/full: the records not written are reported in a line", .requires(.pythonCryptography))
    func deviceFull() async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(
            appStore: store,
            arguments: ["--decision-log", "/dev/full"],
            environment: ["DECISION_LOG_SALT": Self.salt]
        )
        #expect(try await server.get("/decision?transactionId=ok1").status == 200)
        var report: String?
        let deadline = ContinuousClock.now + .seconds(30)
        while report == nil, ContinuousClock.now < deadline {
            report = server.logLines().first { $0.hasPrefix("decision log: ") }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(report == "decision log: 1 record not written: No space left on device")
    }

    @Test(
        "--decision-log FILE renamed away: within seconds records go to a new file at the path",
        .requires(.pythonCryptography)
    )
    func reopensAfterRename() async throws {
        let store = try await FakeAppStore()
        let directory = NSTemporaryDirectory() + "decision-rotation-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/decisions.jsonl"
        let server = try await DecisionServerProcess.start(
            appStore: store,
            arguments: ["--decision-log", path],
            environment: ["DECISION_LOG_SALT": Self.salt]
        )
        func lines(_ file: String) -> [String] {
            ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        #expect(try await server.get("/decision?transactionId=ok1").status == 200)
        let deadline = ContinuousClock.now + .seconds(30)
        while lines(path).isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        try FileManager.default.moveItem(atPath: path, toPath: path + ".1")
        // The path is checked at most once a second: decisions until one lands in a new file there.
        var sent = 0
        while lines(path).isEmpty, ContinuousClock.now < deadline {
            #expect(try await server.get("/decision?transactionId=ok1").status == 200)
            sent += 1
            try await Task.sleep(for: .milliseconds(100))
        }
        let renamed = lines(path + ".1")
        let reopened = lines(path)
        #expect(!reopened.isEmpty, "no record reached a new file at the path")
        #expect(renamed.count + reopened.count == 1 + sent)
        #expect((renamed + reopened).allSatisfy { $0.hasPrefix(#"{"time":""#) && $0.contains(#""source":"#) })
    }

    @Test(
        "--decision-log naming a FIFO nothing reads: the server stops at once with one line naming it",
        .requires(.pythonCryptography)
    )
    func fifoWithoutReader() async throws {
        let store = try await FakeAppStore()
        let path = NSTemporaryDirectory() + "decisions-\(UUID().uuidString).fifo"
        #expect(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        let (status, errors) = try await StalledLogServer.runToExit(
            appStore: store,
            arguments: ["--decision-log", path],
            environment: ["DECISION_LOG_SALT": Self.salt]
        )
        #expect(status == 2)
        #expect(
            errors == [
                "Error: cannot open the decision log \(path): it is a FIFO and nothing reads it; start its reader first"
            ]
        )
    }

    @Test("a DECISION_LOG_SALT of one repeated character is refused at start", .requires(.pythonCryptography))
    func repeatedSalt() async throws {
        let store = try await FakeAppStore()
        let (status, errors) = try await StalledLogServer.runToExit(
            appStore: store,
            arguments: [],
            environment: ["DECISION_LOG_SALT": String(repeating: "x", count: 40)]
        )
        #expect(status == 2)
        #expect(
            errors.first
                == "Error: DECISION_LOG_SALT: the decision log's salt must have at least 8 distinct byte values, "
                + "not 1: use random bytes, such as the output of openssl rand -hex 32"
        )
    }

    /// The number just before `marker` in `line`, such as 12 in `decision log: 12 records dropped`.
    static func count(in line: String, before marker: String) -> Int? {
        guard let range = line.range(of: marker) else { return nil }
        return Int(line[..<range.lowerBound].reversed().prefix { $0.isNumber }.reversed().map(String.init).joined())
    }
}

/// A group-decision-server whose standard output and standard error are pipes of 4 KiB (on Linux), each
/// either read all along or not read at all (until the test says so).
final class StalledLogServer: @unchecked Sendable {
    enum Stream {
        /// Read all along, kept for the test.
        case collected
        /// Not read (after the line saying where the server listens, for standard output).
        case unread
    }

    let port: Int
    private let process: Process
    private let errors: Pipe
    private let errorBytes = Locked<[UInt8]>([])
    private let readingErrors = Locked(false)

    private init(port: Int, process: Process, errors: Pipe) {
        self.port = port
        self.process = process
        self.errors = errors
    }

    static func start(
        appStore: FakeAppStore,
        arguments: [String],
        environment: [String: String] = [:],
        output: Stream,
        errors: Stream
    ) async throws -> StalledLogServer {
        let outputPipe = Pipe()
        let errorPipe = Pipe()
        let process = try launch(appStore: appStore, arguments: arguments, environment: environment) { process in
            process.standardOutput = outputPipe
            process.standardError = errorPipe
            shrink(outputPipe)
            shrink(errorPipe)
        }
        // The listening line, read a byte at a time so nothing after it is consumed.
        let line = try await offCooperativePool {
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while line.last != 10, read(outputPipe.fileHandleForReading.fileDescriptor, &byte, 1) == 1 {
                line.append(byte)
            }
            return String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let prefix = "group-decision-server listening on http://127.0.0.1:"
        guard line.hasPrefix(prefix), let port = Int(line.dropFirst(prefix.count)) else {
            process.terminate()
            throw FakeAppStoreError(message: "group-decision-server did not start (printed '\(line)')")
        }
        let server = StalledLogServer(port: port, process: process, errors: errorPipe)
        if output == .collected { collect(outputPipe, into: Locked<[UInt8]>([])) }
        if errors == .collected { server.startReadingErrors() }
        return server
    }

    /// Starts (once) reading standard error into ``errorLines()``.
    func startReadingErrors() {
        guard
            readingErrors.withLock({ reading in
                defer { reading = true }
                return !reading
            })
        else { return }
        Self.collect(errors, into: errorBytes)
    }

    /// The whole lines read from standard error so far.
    func errorLines() -> [String] {
        let text = String(decoding: errorBytes.withLock { $0 }, as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// The first line of standard error matching `condition`, waiting up to 30 seconds for it.
    func errorLine(where condition: (String) -> Bool) async throws -> String? {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let line = errorLines().first(where: condition) { return line }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    deinit {
        process.terminate()
        for _ in 0..<200 where process.isRunning { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Runs the server until it exits (killed after two minutes): its status and its standard error.
    ///
    /// The servers these tests start stop within a second on an idle machine; the wide window is
    /// for a machine busy with the rest of the suite (one CI run saw a server outlast 30 seconds).
    static func runToExit(
        appStore: FakeAppStore,
        arguments: [String],
        environment: [String: String]
    ) async throws -> (Int32, [String]) {
        let errorPipe = Pipe()
        let bytes = Locked<[UInt8]>([])
        let process = try launch(appStore: appStore, arguments: arguments, environment: environment) { process in
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errorPipe
        }
        collect(errorPipe, into: bytes)
        let deadline = ContinuousClock.now + .seconds(120)
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let printed = String(decoding: bytes.withLock { $0 }, as: UTF8.self)
            Issue.record("the server was still running after 120 seconds; it had printed \(printed.debugDescription)")
        }
        try await Task.sleep(for: .milliseconds(100))
        let text = String(decoding: bytes.withLock { $0 }, as: UTF8.self)
        return (process.terminationStatus, text.split(separator: "\n").map(String.init))
    }

    private static func launch(
        appStore: FakeAppStore,
        arguments: [String],
        environment: [String: String],
        streams: (Process) -> Void
    ) throws -> Process {
        let process = Process()
        process.executableURL = try DecisionServerProcess.binary()
        process.arguments =
            ["--port", "0", "--policies", DecisionServerTests.policies, "--base-url", appStore.baseURL.absoluteString]
            + arguments
        process.environment = [
            "APP_STORE_KEY_ID": FakeAppStore.keyID,
            "APP_STORE_ISSUER_ID": FakeAppStore.issuerID,
            "APP_STORE_BUNDLE_ID": FakeAppStore.bundleID,
            "APP_STORE_PRIVATE_KEY_PATH": TestFiles.fixture("test-key.p8").path,
        ].merging(environment) { _, new in new }
        process.standardInput = FileHandle.nullDevice
        streams(process)
        try process.run()
        return process
    }

    /// Makes the pipe hold one page, so a reader that stops reading is felt after a few lines.
    private static func shrink(_ pipe: Pipe) {
        #if os(Linux)
        let setPipeSize: Int32 = 1031  // F_SETPIPE_SZ
        _ = fcntl(pipe.fileHandleForWriting.fileDescriptor, setPipeSize, 4096)
        #endif
    }

    /// Reads the pipe until its end on a thread of its own, appending to `bytes`.
    private static func collect(_ pipe: Pipe, into bytes: Locked<[UInt8]>) {
        Thread.detachNewThread {
            // The thread keeps the pipe, so its descriptor stays open while it reads.
            let descriptor = pipe.fileHandleForReading.fileDescriptor
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    bytes.withLock { $0 += chunk[..<count] }
                } else if count == 0 || errno != EINTR {
                    return
                }
            }
        }
    }
}
