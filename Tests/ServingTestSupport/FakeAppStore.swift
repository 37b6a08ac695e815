package import AppStoreGroups
package import Foundation
import GroupPolicyBasics
package import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Paths of the files the tests use, found from this source file.
package enum TestFiles {
    /// This target's folder, which holds the fixtures and the Python servers.
    package static let testsDirectory = URL(filePath: #filePath).deletingLastPathComponent()
    package static let packageRoot = testsDirectory.deletingLastPathComponent().deletingLastPathComponent()
    package static let server = testsDirectory.appending(path: "Server/fake_app_store.py")

    package static func fixture(_ name: String) -> URL {
        testsDirectory.appending(path: "Fixtures/\(name)")
    }

    package static func text(_ name: String) throws -> String {
        try String(contentsOf: fixture(name), encoding: .utf8)
    }
}

/// One request the fake server saw.
package struct LoggedRequest: Decodable, Sendable {
    package var path: String
    package var query: [String: [String]]
    package var timeMs: Int64
    package var token: String?
    package var authorization: String
    package var host: String?
}

/// The fake App Store process (Server/fake_app_store.py) on 127.0.0.1 that all tests share, and its port: started by
/// the first test that needs it, waiting for its port off Swift's cooperative threads (the network tests need them, and
/// the machine may have only two); it exits when the test process does.
private let sharedServer = Task {
    try await offCooperativePool {
        let server = try PythonServer(
            "fake_app_store.py",
            [
                "serve", "--public-key", TestFiles.fixture("test-key.pub.pem").path, "--key-id", FakeAppStore.keyID,
                "--issuer-id", FakeAppStore.issuerID, "--bundle-id", FakeAppStore.bundleID,
            ]
        )
        return (server, try readPort(server.process, server.output).0)
    }
}

/// One test's view of the fake App Store: its own namespace (a path prefix in the base URL) on the
/// shared server, so its request log and per-id counters are its own.
package struct FakeAppStore: Sendable {
    package static let keyID = "TESTKEY123"
    package static let issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    package static let bundleID = "com.example.groups"

    package let port: Int
    package let namespace = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()

    /// A namespace on the shared server.
    package init() async throws {
        port = try await sharedServer.value.1
    }

    package var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/t/\(namespace)") ?? URL(filePath: "/") }

    /// The log once it holds `count` requests, waiting up to `limit` for the server to get to them.
    ///
    /// A request the client gave up on at its deadline may not have been read, let alone logged,
    /// when the error comes back; on a loaded machine the server reads it a little later.
    package func log(count: Int, limit: Duration = .seconds(60)) async throws -> [LoggedRequest] {
        try await waitUntil(atMost: limit) { try await log().count >= count }
        return try await log()
    }

    /// Every request this test's namespace saw, oldest first.
    package func log() async throws -> [LoggedRequest] {
        let url = try #require(URL(string: "http://127.0.0.1:\(port)/__log/\(namespace)"))
        let (data, _) = try await URLSession.shared.data(from: url)
        return try JSONDecoder().decode([LoggedRequest].self, from: data)
    }

    package static func credentials(key: String = "test-key.p8") throws -> AppStoreCredentials {
        AppStoreCredentials(
            keyID: keyID,
            issuerID: issuerID,
            bundleID: bundleID,
            privateKeyPEM: try TestFiles.text(key)
        )
    }

    /// A client for this server.
    ///
    /// Each attempt may take a minute by default: a test that expects an answer, an error answer or
    /// a number of attempts must not see one of them turn into a timeout because the machine is
    /// busy (beside a loaded CI one exchange with the fake took seconds, and a retried call 18.8 s
    /// in all), which a timeout of 10 s allowed. Tests of the timeout pass their own.
    package func client(
        retryPolicy: RetryPolicy = .default,
        timeout: Duration = .seconds(60),
        timeSource: TimeSource = .system,
        key: String = "test-key.p8",
        transport: (any HTTPTransport)? = nil
    ) throws -> AppStoreGroupsClient {
        try AppStoreGroupsClient(
            server: .custom(baseURL: baseURL),
            credentials: Self.credentials(key: key),
            transport: transport ?? URLSessionTransport(),
            retryPolicy: retryPolicy,
            timeout: timeout,
            timeSource: timeSource
        )
    }
}

/// Runs blocking work (waiting for a process, reading a pipe) on a thread of its own, so Swift's
/// cooperative threads stay free for the tests' network I/O.
package func offCooperativePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// A Python server of the tests started as `python3 Server/<script> arguments…`, its standard input
/// and output piped: how every Python server of the tests starts.
///
/// Its standard input stays open while this object lives; the server exits when it closes, so a
/// crashed test run leaves no server behind.
package final class PythonServer: @unchecked Sendable {
    package let process = Process()
    package let input = Pipe()
    package let output = Pipe()

    package init(_ script: String, _ arguments: [String]) throws {
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = ["python3", TestFiles.testsDirectory.appending(path: "Server/\(script)").path] + arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    deinit {
        closeInput()
        if process.isRunning { process.terminate() }
    }

    /// Closes the server's standard input, which makes it exit.
    package func closeInput() { try? input.fileHandleForWriting.close() }
}

/// Reads the line a server prints once it listens, `PORT <n>` for the Python ones (ending the
/// process when it prints anything else): the port, and the bytes that came after the line.
package func readPort(_ process: Process, _ output: Pipe, prefix: String = "PORT ") throws -> (Int, [UInt8]) {
    let (text, rest) = try readFirstLine(output.fileHandleForReading)
    guard text.hasPrefix(prefix), let port = Int(text.dropFirst(prefix.count)) else {
        process.terminate()
        throw HarnessError(message: "\(process.arguments ?? []) did not start (printed '\(text)')")
    }
    return (port, rest)
}

/// Reads a child's standard output up to its first line (the one naming where it listens): the
/// line, trimmed, and the bytes that came after it.
package func readFirstLine(_ output: FileHandle) throws -> (line: String, rest: [UInt8]) {
    var received: [UInt8] = []
    while !received.contains(UInt8(ascii: "\n")) {
        let data = try output.readAvailableBytes()
        if data.isEmpty { break }
        received += data
    }
    let newline = received.firstIndex(of: UInt8(ascii: "\n")) ?? received.endIndex
    let line = String(decoding: received[..<newline], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    return (line, Array(received[min(newline + 1, received.endIndex)...]))
}

/// What a finished process printed and how it ended.
package struct ProcessResult: Sendable {
    package var status: Int32
    package var standardOutput: String
    package var standardError: String
    /// From starting the process to its exit, measured off the cooperative pool.
    package var elapsed: Duration = .zero
}

/// Runs a program to completion off the cooperative threads, feeding it `input`.
package func runProcess(
    _ executable: URL,
    _ arguments: [String],
    environment: [String: String]? = nil,
    input: String = ""
) async throws -> ProcessResult {
    try await offCooperativePool {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        let started = ContinuousClock.now
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        // Standard error is read on its own thread: a child filling one pipe while the other is read would hang.
        let errorData = Locked(Data())
        let errorRead = DispatchSemaphore(value: 0)
        Thread {
            errorData.withLock { $0 = Data((try? stderr.fileHandleForReading.readBytesToEnd()) ?? []) }
            errorRead.signal()
        }
        .start()
        let outputData = try stdout.fileHandleForReading.readBytesToEnd()
        process.waitUntilExit()
        let elapsed = ContinuousClock.now - started
        errorRead.wait()
        return ProcessResult(
            status: process.terminationStatus,
            standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData.withLock { $0 }, as: UTF8.self),
            elapsed: elapsed
        )
    }
}

/// A time source that records every wait.
///
/// `now` is real, fixed, or (stepping) the start plus every wait so far, so each wait is recorded
/// exactly however slow the machine; with `spendsWaits` the waits are also spent (on a timer of
/// their own), so a test can bound the real elapsed time, else they return at once.
package final class RecordingTimeSource: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [Duration] = []
    private let fixedNow: Date?
    private let steppingFrom: Date?
    private let spendsWaits: Bool

    package init(fixedNow: Date? = nil, steppingFrom: Date? = nil, spendsWaits: Bool = false) {
        self.fixedNow = fixedNow
        self.steppingFrom = steppingFrom
        self.spendsWaits = spendsWaits
    }

    package var sleeps: [Duration] { lock.withLock { recorded } }

    package var total: Duration { sleeps.reduce(.zero, +) }

    package var timeSource: TimeSource {
        TimeSource(
            now: { [self] in steppingFrom.map { $0.addingTimeInterval(total.seconds) } ?? fixedNow ?? Date() },
            sleep: { [self] duration in
                if spendsWaits { await sleepOffPool(duration) }
                lock.withLock { recorded.append(duration) }
            }
        )
    }
}

/// Retries without jitter, so waits are exact.
package let exactRetries = RetryPolicy(
    maximumAttempts: 3,
    maximumRateLimitWait: .seconds(30),
    initialBackoff: .milliseconds(500),
    maximumBackoff: .seconds(8),
    jitter: 0
)

/// Runs `body`, returning the `AppStoreGroupsError` it throws; fails the test when it throws none.
package func expectError<T>(
    sourceLocation: Testing.SourceLocation = #_sourceLocation,
    _ body: () async throws -> T
) async -> AppStoreGroupsError? {
    do {
        let value = try await body()
        Issue.record("expected an AppStoreGroupsError, got \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as AppStoreGroupsError {
        return error
    } catch {
        Issue.record("expected an AppStoreGroupsError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
