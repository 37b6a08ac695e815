import Foundation
import GroupPolicy
import ServingTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What an orchestrator and a monitor rely on: health, readiness, metrics a Prometheus parser
/// reads, the admin token, options from the environment without a secret in sight, and a stop
/// that loses no accepted request.
@Suite("Decision server: operations")
struct DecisionServerOperationsTests {
    @Test("/healthz answers alive; /readyz ready with the policies' revision", .requires(.pythonCryptography))
    func healthAndReadiness() async throws {
        let server = try await DecisionServerProcess.start(appStore: try await FakeAppStore())
        let health = try await server.get("/healthz")
        #expect(health.status == 200)
        #expect(health.text == #"{"status":"alive"}"#)
        let ready = try await server.get("/readyz")
        #expect(ready.status == 200)
        let revision = try Policy(contentsOf: DecisionServerTests.policies).revision
        #expect(ready.text == #"{"status":"ready","policyRevision":"\#(revision)"}"#)
        #expect(try await server.get("/healthz?verbose=1").status == 400)
    }

    @Test(
        "/readyz is 503 with the reason while the shared cache does not answer, 200 once it does",
        .requires(.pythonCryptography),
        .requires(.redisServer)
    )
    func readinessFollowsTheSharedCache() async throws {
        let redis = try await RedisServer.start()
        let server = try await DecisionServerProcess.start(
            appStore: try await FakeAppStore(),
            arguments: ["--redis", "127.0.0.1:\(redis.port)"]
        )
        #expect(try await server.get("/readyz").status == 200)
        redis.stop()
        let down = try await server.get("/readyz")
        #expect(down.status == 503)
        #expect(down.retryAfter == "1")
        #expect(
            down.text.hasPrefix(
                #"{"error":{"code":"not-ready","message":"the shared cache at 127.0.0.1:\#(redis.port) "#
            )
        )
        try await redis.restart()
        var status = 503
        for _ in 0..<100 where status == 503 {
            status = try await server.get("/readyz").status
            if status == 503 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(status == 200)
    }

    /// The exposition is read with `prometheus_client`'s own parser, and each count is the one the
    /// requests before it make: a live decision, a cached one, a refused one, an invalidation.
    @Test(
        "/metrics parses with prometheus_client and counts decisions, the cache, upstream calls and requests",
        .requires(.pythonCryptography),
        .requires(.prometheusClient)
    )
    func metricsParseAndCount() async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(appStore: store)
        #expect(try await server.get("/decision?transactionId=ok1").status == 200)
        #expect(try await server.get("/decision?transactionId=ok1").status == 200)
        #expect(try await server.get("/decision?transactionId=transactionIdNotFound").status == 404)
        #expect(try await server.post("/invalidate?transactionId=ok1").status == 200)
        let metrics = try await server.get("/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.contentType == "text/plain; version=0.0.4; charset=utf-8")
        let parsed = try await runProcess(
            URL(filePath: "/usr/bin/env"),
            [
                "python3", "-c",
                """
                import sys
                from prometheus_client.parser import text_string_to_metric_families
                for family in text_string_to_metric_families(sys.stdin.read()):
                    for sample in family.samples:
                        labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
                        print(f"{family.type} {sample.name}{{{labels}}} {float(sample.value):g}")
                """,
            ],
            input: metrics.text
        )
        #expect(parsed.status == 0, "\(parsed.standardError)")
        let samples = Set(parsed.standardOutput.split(separator: "\n").map(String.init))
        for expected in [
            #"counter group_decision_server_decisions_total{outcome="served",source="live"} 1"#,
            #"counter group_decision_server_decisions_total{outcome="served",source="cache"} 1"#,
            #"counter group_decision_server_decisions_total{outcome="transaction-id-not-found",source="none"} 1"#,
            #"counter group_decision_server_cache_hits_total{cache="local"} 1"#,
            #"counter group_decision_server_cache_misses_total{} 2"#,
            #"counter group_decision_server_upstream_requests_total{endpoint="customer-groups",status="200"} 1"#,
            #"counter group_decision_server_upstream_requests_total{endpoint="customer-groups",status="404"} 1"#,
            #"counter group_decision_server_invalidations_total{scope="customer"} 1"#,
            #"counter group_decision_server_requests_total{code="200",route="/decision"} 2"#,
            #"counter group_decision_server_requests_total{code="404",route="/decision"} 1"#,
            #"counter group_decision_server_requests_total{code="200",route="/invalidate"} 1"#,
            #"histogram group_decision_server_request_duration_seconds_count{route="/decision"} 3"#,
            #"histogram group_decision_server_request_duration_seconds_bucket{le="+Inf",route="/decision"} 3"#,
            #"gauge group_decision_server_shadow_decisions{} 0"#,
        ] {
            #expect(samples.contains(expected), "missing: \(expected)")
        }
        #expect(try await store.log().count == 2)
    }

    @Test(
        "with an admin token, /invalidate and /shadow/reset need it; the token is never printed",
        .requires(.pythonCryptography)
    )
    func adminToken() async throws {
        let token = "0123456789abcdef0123456789abcdef-admin"
        let file = URL(filePath: NSTemporaryDirectory()).appending(path: "admin-token-\(UUID().uuidString)")
        try (token + "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let server = try await DecisionServerProcess.start(
            appStore: try await FakeAppStore(),
            arguments: ["--admin-token-file", file.path]
        )
        for (headers, status) in [
            ("", 401), ("Authorization: Bearer wrong\r\n", 401), ("Authorization: \(token)\r\n", 401),
            ("Authorization: Bearer \(token)x\r\n", 401), ("Authorization: Bearer \(token)\r\n", 200),
        ] {
            for path in ["/invalidate?all=true", "/shadow/reset"] {
                let answer = try await server.exchange("POST \(path) HTTP/1.1\r\nHost: x\r\n\(headers)\r\n")
                #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(path) with '\(headers)': \(answer.prefix(60))")
                if status == 401 {
                    #expect(answer.contains("\r\nWWW-Authenticate: Bearer\r\n"))
                    let route = path.split(separator: "?")[0]
                    #expect(
                        answer.hasSuffix(
                            #"{"error":{"code":"unauthorized","message":"POST \#(route) needs the admin token: Authorization: Bearer <token>"}}"#
                        )
                    )
                }
            }
        }
        // Decisions need no token.
        #expect(try await server.get("/decision?transactionId=ok1").status == 200)
        let scan = try SecretScan(tokens: [token])
        scan.check(server.logLines().joined(separator: "\n"), "the log")
    }

    /// A page of another site open in a browser on the server's machine can send `POST /invalidate`
    /// without a preflight; browsers mark it, and it is refused, with or without a token set.
    @Test(
        "an administrative request a browser sends for another site is refused",
        .requires(.pythonCryptography)
    )
    func crossSiteAdministrativeRequestsAreRefused() async throws {
        let server = try await DecisionServerProcess.start(appStore: try await FakeAppStore())
        for site in ["cross-site", "same-site"] {
            for path in ["/invalidate?all=true", "/shadow/reset"] {
                let answer = try await server.exchange(
                    "POST \(path) HTTP/1.1\r\nHost: x\r\nSec-Fetch-Site: \(site)\r\nConnection: close\r\n\r\n"
                )
                let route = path.split(separator: "?")[0]
                #expect(answer.hasPrefix("HTTP/1.1 403 "), "\(path) from \(site): \(answer.prefix(60))")
                #expect(
                    answer.hasSuffix(
                        #"{"error":{"code":"cross-site","message":"POST \#(route) is refused from a web page of another site (Sec-Fetch-Site: \#(site))"}}"#
                    )
                )
            }
        }
        // The page's own origin (a same-origin request) and the server's callers are served.
        let own = try await server.exchange(
            "POST /invalidate?all=true HTTP/1.1\r\nHost: x\r\nSec-Fetch-Site: same-origin\r\nConnection: close\r\n\r\n"
        )
        #expect(own.hasPrefix("HTTP/1.1 200 "))
        #expect(try await server.post("/invalidate?all=true").status == 200)
    }

    @Test("listening off loopback without an admin token is refused at start", .requires(.pythonCryptography))
    func offLoopbackNeedsAToken() async throws {
        let result = try await runProcess(
            URL(filePath: "/usr/bin/timeout"),
            ["10", try DecisionServerProcess.binary().path, "--host", "0.0.0.0", "--port", "0"],
            environment: Self.credentials
        )
        #expect(result.status == 2)
        #expect(
            result.standardError.hasPrefix(
                "Error: listening on 0.0.0.0 needs --admin-token-file (GROUP_DECISION_SERVER_ADMIN_TOKEN_FILE)"
            )
        )
        #expect(!result.standardOutput.contains("listening"))
    }

    /// A secret's file given by mistake (a huge file, a FIFO nobody writes, a directory, a symbolic
    /// link loop) is refused at start with one line naming the flag or variable, at once and without
    /// reading it whole; a symbolic link to a regular file (a mounted secret) is read.
    @Test("the admin token and private key files: anything but a small regular file is refused at once")
    func secretFilesAreReadBounded() async throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "secret-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let huge = directory.appending(path: "huge").path
        #expect(FileManager.default.createFile(atPath: huge, contents: nil))
        #expect(truncate(huge, 1 << 30) == 0)
        let fifo = directory.appending(path: "fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let loop = directory.appending(path: "loop").path
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)
        let token = directory.appending(path: "token").path
        try "0123456789abcdef0123456789abcdef\n".write(toFile: token, atomically: true, encoding: .utf8)
        let linked = directory.appending(path: "linked").path
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: token)
        let binary = try DecisionServerProcess.binary().path
        // The token's file, the key's file ("" for the test key) and the first line of standard error.
        let cases: [(file: String, key: String, line: String)] = [
            (huge, "", "Error: --admin-token-file: \(huge): file of 1073741824 bytes is over the limit of 4096 bytes"),
            (fifo, "", "Error: --admin-token-file: \(fifo) is a FIFO, not a regular file"),
            (directory.path, "", "Error: --admin-token-file: \(directory.path) is a directory, not a regular file"),
            (loop, "", "Error: --admin-token-file: cannot read \(loop): too many levels of symbolic links"),
            (
                linked, huge,
                "Error: APP_STORE_PRIVATE_KEY_PATH: \(huge): file of 1073741824 bytes is over the limit of 65536 bytes"
            ),
            (linked, fifo, "Error: APP_STORE_PRIVATE_KEY_PATH: \(fifo) is a FIFO, not a regular file"),
        ]
        for (file, key, line) in cases {
            let result = try await runProcess(
                URL(filePath: "/usr/bin/timeout"),
                ["10", binary, "--port", "0", "--host", "0.0.0.0", "--admin-token-file", file],
                environment: Self.credentials.merging(key.isEmpty ? [:] : ["APP_STORE_PRIVATE_KEY_PATH": key]) { $1 }
            )
            #expect(result.status == 2, "\(line)")
            #expect(result.standardError.split(separator: "\n").first.map(String.init) == line)
            #expect(!result.standardOutput.contains("listening"))
        }
    }

    /// The policies are read again every reload interval: a FIFO given for them held the start
    /// until something wrote to it, without a line; it is refused at once.
    @Test("a FIFO given as the policies or the candidate policies is refused at start with one line")
    func policiesThatAreAFIFOAreRefused() async throws {
        let fifo = NSTemporaryDirectory() + "policies-fifo-\(UUID().uuidString)"
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let binary = try DecisionServerProcess.binary().path
        for (flag, line) in [
            (
                "--policies",
                "Error: --policies \(fifo) is a FIFO: give a policy file or directory (it is read again every --reload-interval)"
            ),
            (
                "--candidate-policies",
                "Error: --candidate-policies \(fifo) is a FIFO: give a policy file or directory (it is read again every --reload-interval)"
            ),
        ] {
            let result = try await runProcess(
                URL(filePath: "/usr/bin/timeout"),
                ["10", binary, "--port", "0", flag, fifo],
                environment: Self.credentials
            )
            #expect(result.status == 2)
            #expect(result.standardError.split(separator: "\n").first.map(String.init) == line)
        }
    }

    @Test("every option can come from its environment variable; a bad one is named, a flag wins")
    func optionsFromTheEnvironment() async throws {
        let binary = try DecisionServerProcess.binary().path
        let bad = try await runProcess(
            URL(filePath: "/usr/bin/timeout"),
            ["10", binary, "--port", "0"],
            environment: Self.credentials.merging(["GROUP_DECISION_SERVER_CACHE_TTL": "soon"]) { $1 }
        )
        #expect(bad.status == 2)
        #expect(
            bad.standardError.hasPrefix(
                "Error: GROUP_DECISION_SERVER_CACHE_TTL must be a positive number of seconds, not 'soon'"
            )
        )
        // The flag wins over its variable: this one is checked, the variable's never read.
        let flag = try await runProcess(
            URL(filePath: "/usr/bin/timeout"),
            ["10", binary, "--port", "0", "--cache-ttl", "0"],
            environment: Self.credentials.merging(["GROUP_DECISION_SERVER_CACHE_TTL": "soon"]) { $1 }
        )
        #expect(flag.standardError.hasPrefix("Error: --cache-ttl must be a positive number of seconds, not '0'"))
        // Every option of --help has a variable, and the help names the rule, never a value.
        let help = try await runProcess(
            URL(filePath: "/usr/bin/env"),
            [binary, "--help"],
            environment: Self.credentials.merging(["DECISION_LOG_SALT": "a-salt-that-must-stay-secret-0123"]) { $1 }
        )
        #expect(help.status == 0)
        #expect(help.standardOutput.contains("GROUP_DECISION_SERVER_CACHE_TTL=600"))
        #expect(!help.standardOutput.contains("a-salt-that-must-stay-secret-0123"))
        #expect(!help.standardOutput.contains(FakeAppStore.keyID))
    }

    @Test(
        "an option from its variable is served: the host and port from the environment",
        .requires(.pythonCryptography)
    )
    func environmentConfiguresTheServer() async throws {
        let server = try await DecisionServerProcess.start(
            appStore: try await FakeAppStore(),
            environment: ["GROUP_DECISION_SERVER_CACHE_TTL": "1", "GROUP_DECISION_SERVER_HOST": "127.0.0.1"]
        )
        let store = try await FakeAppStore()
        _ = store
        #expect(try await server.get("/decision?transactionId=ok2").status == 200)
        try await Task.sleep(for: .milliseconds(1100))
        let again = try await server.get("/decision?transactionId=ok2")
        #expect(again.groupsSource == "live", "GROUP_DECISION_SERVER_CACHE_TTL=1 was not applied")
    }

    /// Sixteen kept-alive connections ask for decisions; SIGTERM comes in the middle.
    ///
    /// Every request the server answered (its access log) reached its client whole,
    /// no client got half an answer, and the process exits 0 with its log flushed.
    @Test(
        "SIGTERM during 16 connections of load loses no accepted request, and the process exits 0",
        .requires(.pythonCryptography)
    )
    func stopUnderLoadLosesNothing() async throws {
        let server = try await DecisionServerProcess.start(appStore: try await FakeAppStore())
        #expect(try await server.get("/decision?transactionId=ok1").status == 200)
        let load = Load(port: server.port, connections: 16)
        load.start()
        for _ in 0..<200 where load.answered < 2000 { try await Task.sleep(for: .milliseconds(50)) }
        server.signal(SIGTERM)
        // The grace is 10 s; under a load of 20 on two cores the exit took longer than 30 s.
        let status = try await server.exitStatus(within: .seconds(180))
        #expect(status == 0, "the server's log: \(server.logLines().suffix(5))")
        let outcome = try await offCooperativePool { load.wait() }
        #expect(outcome.partial == 0, "a client got part of an answer")
        #expect(outcome.answered > 0)
        let lines = server.logLines()
        let logged = lines.filter { $0.hasPrefix("GET /decision 200 ") }.count
        // The first request above was answered before the load began.
        #expect(logged == outcome.answered + 1, "answered by the server: \(logged - 1), received: \(outcome.answered)")
        #expect(lines.contains("stopped"))
    }

    static let credentials = [
        "APP_STORE_KEY_ID": FakeAppStore.keyID, "APP_STORE_ISSUER_ID": FakeAppStore.issuerID,
        "APP_STORE_BUNDLE_ID": FakeAppStore.bundleID,
        "APP_STORE_PRIVATE_KEY_PATH": TestFiles.fixture("test-key.p8").path,
    ]
}

/// Clients on kept-alive connections, each asking again as soon as its answer is whole, until the
/// server closes the connection.
final class Load: Sendable {
    struct Outcome: Sendable {
        /// Whole answers received.
        var answered = 0
        /// Connections that ended in the middle of an answer.
        var partial = 0
    }

    private let port: Int
    private let connections: Int
    private let outcome = Mutex(Outcome())
    private let running = Mutex(0)

    init(port: Int, connections: Int) {
        self.port = port
        self.connections = connections
    }

    var answered: Int { outcome.withLock { $0.answered } }

    func start() {
        running.withLock { $0 = connections }
        for _ in 0..<connections {
            Thread.detachNewThread { [self] in
                run()
                running.withLock { $0 -= 1 }
            }
        }
    }

    /// Waits (blocking, at most a minute) until every connection has ended.
    func wait() -> Outcome {
        for _ in 0..<600 where running.withLock({ $0 }) > 0 { usleep(100_000) }
        return outcome.withLock { $0 }
    }

    private func run() {
        guard let connection = try? RawConnection.dial(port: port) else { return }
        defer { close(connection) }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array("GET /decision?transactionId=ok1 HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            #if canImport(Glibc)
            let sent = request.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            #else
            let sent = request.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) }
            #endif
            guard sent == request.count else { return }
            var received: [UInt8] = []
            while DecisionServerProcess.answerEnd(received) == nil {
                let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                guard count > 0 else {
                    // Closed (or reset) before an answer: not accepted, unless part of one came.
                    if !received.isEmpty { outcome.withLock { $0.partial += 1 } }
                    return
                }
                received += chunk[..<count]
            }
            guard String(decoding: received.prefix(15), as: UTF8.self) == "HTTP/1.1 200 OK" else {
                outcome.withLock { $0.partial += 1 }
                return
            }
            outcome.withLock { $0.answered += 1 }
        }
    }
}
