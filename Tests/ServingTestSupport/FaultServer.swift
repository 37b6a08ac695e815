package import AppStoreGroups
package import Foundation
import GroupPolicyBasics
import GroupPolicyTestSupport
import Testing

/// One thing a client did to a fault server (Server/fault_server.py).
package struct FaultServerEvent: Decodable, Sendable {
    /// `connection` (plain), `handshake-failed`, `handshake-ok` or `request` (tls).
    package var event: String
    /// What the client sent, base64: the first bytes of a connection, or a request after a handshake.
    package var bytes: String?
    /// Why a handshake failed, as Python's ssl module says it.
    package var reason: String?

    /// The bytes the client sent, decoded.
    package var data: [UInt8] { bytes.flatMap { Data(base64Encoded: $0) }.map(Array.init) ?? [] }
}

/// A running fault server on 127.0.0.1 that gets TLS wrong on purpose: `plain` speaks plain HTTP
/// where the client expects TLS, `tls` presents a self-signed certificate made at start.
///
/// The server prints one JSON event per line; ``stop()`` closes its standard input, ending it, and returns every event.
package final class FaultServer: @unchecked Sendable {
    package enum Mode: String { case plain, tls }

    package let port: Int
    private let server: PythonServer
    private let pending: [UInt8]

    /// Starts a server; the blocking wait for its port runs off the cooperative threads.
    package static func start(_ mode: Mode) async throws -> FaultServer {
        try await offCooperativePool { try FaultServer(mode) }
    }

    private init(_ mode: Mode) throws {
        server = try PythonServer("fault_server.py", [mode.rawValue])
        (port, pending) = try readPort(server.process, server.output)
    }

    /// An `https` base URL for this server.
    package var baseURL: URL { URL(string: "https://127.0.0.1:\(port)") ?? URL(filePath: "/") }

    /// Ends the server and returns everything it recorded, oldest first.
    package func stop() async throws -> [FaultServerEvent] {
        let data = try await offCooperativePool { [self] in
            server.closeInput()
            let rest = try server.output.fileHandleForReading.readBytesToEnd()
            server.process.waitUntilExit()
            return Data(pending) + rest
        }
        let decoder = JSONDecoder()
        return try data.split(separator: UInt8(ascii: "\n")).map { try decoder.decode(FaultServerEvent.self, from: $0) }
    }
}

/// A loopback port that refuses every connection: bound, never listening, and held so no other
/// process can take it while the test runs.
package final class RefusingPort: Sendable {
    private let socket: LoopbackSocket
    package var port: Int { socket.port }
    package var baseURL: URL { URL(string: "http://127.0.0.1:\(port)") ?? URL(filePath: "/") }

    package init() throws {
        socket = try LoopbackSocket(refusing: ())
    }
}

/// Retries that cost little real time: 3 attempts, backoff 100 ms then 200 ms, no jitter.
package let quickRetries = RetryPolicy(
    maximumAttempts: 3,
    maximumRateLimitWait: .seconds(5),
    maximumTotalWait: .seconds(5),
    initialBackoff: .milliseconds(100),
    maximumBackoff: .seconds(1),
    jitter: 0
)

/// Measures how long `body` takes on the continuous clock, running it on a thread of its own (a ``ThreadExecutor``).
///
/// Other suites' CPU-bound tests can keep both cooperative threads of a two-core machine busy for seconds; a fault test
/// run there would measure their work, not the client's. Its waits for I/O and for timers resume on that thread too, so
/// they never queue behind other tests.
package func timed<T>(_ body: () async throws -> T) async rethrows -> (value: T, elapsed: Duration) {
    let executor = ThreadExecutor(name: "timed")
    defer { executor.finish() }
    return try await withTaskExecutorPreference(executor) {
        let started = ContinuousClock.now
        let value = try await body()
        return (value, ContinuousClock.now - started)
    }
}

/// Waits on a timer of its own rather than `Task.sleep`, so the wake-up needs no cooperative
/// thread; the caller resumes on its own executor.
package func sleepOffPool(_ duration: Duration) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        // A serial queue of its own gets a thread even when the global queues' threads, which
        // Swift's cooperative pool shares on Linux, are all busy.
        sleepTimers.asyncAfter(deadline: .now() + duration.seconds) { continuation.resume() }
    }
}

private let sleepTimers = DispatchQueue(label: "AppStoreGroupsTests.sleepTimers")

/// The time a failed call may take: every attempt up to its timeout, every wait, and slack.
///
/// The slack is ten minutes: beside two busy loops on two cores, the suite's process was seen to wait more than a
/// minute for a thread. It still tells a call that ends from one that waits out a year's `Retry-After` or hangs.
package func failureBound(
    timeout: Duration,
    attempts: Int,
    waits: Duration,
    slack: Duration = .seconds(600)
) -> Duration {
    timeout * attempts + waits + slack
}
