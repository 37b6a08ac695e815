import Foundation
import GroupPolicy
import ServingTestSupport
import Synchronization
import Testing

/// What an orchestrator and a monitor rely on: health, readiness, metrics a Prometheus parser
/// reads, the admin token, and a stop that loses no accepted request.
@Suite("Decision server: operations", .requires(.pythonCryptography))
struct DecisionServerOperationsTests {
    @Test(
        "/healthz answers alive; /readyz ready with the policies' revision, 503 with the reason while the shared cache does not answer; its recovery is logged",
        .requires(.redisServer)
    )
    func healthAndReadiness() async throws {
        let redis = try await RedisServer.start()
        let server = try await DecisionServerProcess.start(arguments: ["--redis", "127.0.0.1:\(redis.port)"])
        let health = try await server.get("/healthz")
        #expect(health.status == 200)
        #expect(health.text == #"{"status":"alive"}"#)
        #expect(try await server.get("/healthz?verbose=1").status == 400)
        let ready = try await server.get("/readyz")
        #expect(ready.status == 200)
        let revision = try Policy(contentsOf: DecisionServerProcess.policies).revision
        #expect(ready.text == #"{"status":"ready","policyRevision":"\#(revision)"}"#)
        await redis.stopAndWait()
        let down = try await server.get("/readyz")
        #expect(down.status == 503)
        #expect(down.retryAfter == "1")
        #expect(
            down.text.hasPrefix(
                #"{"error":{"code":"not-ready","message":"the shared cache at 127.0.0.1:\#(redis.port) "#
            )
        )
        // Alive all along; ready again once the shared cache answers.
        #expect(try await server.get("/healthz").status == 200)
        // A decision finds it down; once it answers again, a decision's call through it logs the recovery.
        #expect(try await server.get("/decision?transactionId=ok1").status == 503)
        try await redis.restart()
        try await waitUntil { try await server.get("/readyz").status == 200 }
        try await waitUntil {
            _ = try await server.get("/decision?transactionId=ok1")
            return server.logLines().contains { $0.hasPrefix("shared groups cache answering again after ") }
        }
    }

    /// The exposition is read with `prometheus_client`'s own parser, and each count is the one the
    /// requests before it make: a live decision, a cached one, a refused one, an invalidation.
    @Test(
        "/metrics parses with prometheus_client and counts decisions, the cache, upstream calls and requests",
        .requires(.prometheusClient)
    )
    func metricsParseAndCount() async throws {
        let server = try await DecisionServerProcess.start()
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
        #expect(try await server.appStore.log().count == 2)
    }

    /// A page of another site open in a browser on the server's machine can send `POST /invalidate`
    /// without a preflight; browsers mark it, and it is refused, with or without a token set.
    @Test(
        "with an admin token, /invalidate and /shadow/reset need it, and it is never printed; a request a browser sends for another site is refused, token or not"
    )
    func administrativeRequests() async throws {
        let token = "0123456789abcdef0123456789abcdef-admin"
        let file = URL(filePath: NSTemporaryDirectory()).appending(path: "admin-token-\(UUID().uuidString)")
        try (token + "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let server = try await DecisionServerProcess.start(arguments: ["--admin-token-file", file.path])
        for (headers, status) in [
            ("", 401), ("Authorization: Bearer wrong\r\n", 401), ("Authorization: \(token)\r\n", 401),
            ("Authorization: Bearer \(token)x\r\n", 401), ("Authorization: Bearer \(token)\r\n", 200),
        ] {
            for path in ["/invalidate?all=true", "/shadow/reset"] {
                let answer = try await server.exchange("POST \(path) HTTP/1.1\r\nHost: x\r\n\(headers)\r\n")
                #expect(answer.status == status, "\(path) with '\(headers)': \(answer.raw.prefix(60))")
                if status == 401 {
                    #expect(answer.raw.contains("\r\nWWW-Authenticate: Bearer\r\n"))
                    let route = path.split(separator: "?")[0]
                    #expect(
                        answer.text
                            == #"{"error":{"code":"unauthorized","message":"POST \#(route) needs the admin token: Authorization: Bearer <token>"}}"#
                    )
                }
            }
        }
        // Decisions need no token.
        #expect(try await server.get("/decision?transactionId=ok1").status == 200)
        let open = try await DecisionServerProcess.start()
        for (asked, authorization) in [(open, ""), (server, "Authorization: Bearer \(token)\r\n")] {
            for site in ["cross-site", "same-site"] {
                for path in ["/invalidate?all=true", "/shadow/reset"] {
                    let answer = try await asked.exchange(
                        "POST \(path) HTTP/1.1\r\nHost: x\r\n\(authorization)Sec-Fetch-Site: \(site)\r\nConnection: close\r\n\r\n"
                    )
                    let route = path.split(separator: "?")[0]
                    #expect(answer.status == 403, "\(path) from \(site): \(answer.raw.prefix(60))")
                    #expect(
                        answer.text
                            == #"{"error":{"code":"cross-site","message":"POST \#(route) is refused from a web page of another site (Sec-Fetch-Site: \#(site))"}}"#
                    )
                }
            }
        }
        // The page's own origin (a same-origin request) and the server's callers are served.
        let own = try await open.exchange(
            "POST /invalidate?all=true HTTP/1.1\r\nHost: x\r\nSec-Fetch-Site: same-origin\r\nConnection: close\r\n\r\n"
        )
        #expect(own.status == 200)
        #expect(try await open.post("/invalidate?all=true").status == 200)
        try SecretScan(tokens: [token]).check(server.logLines().joined(separator: "\n"), "the log")
    }

    /// Sixteen kept-alive connections ask for decisions; SIGTERM comes in the middle.
    ///
    /// Every request the server answered (its access log) reached its client whole,
    /// no client got half an answer, and the process exits 0 with its log flushed.
    @Test("SIGTERM during 16 connections of load loses no accepted request, and the process exits 0")
    func stopUnderLoadLosesNothing() async throws {
        // A grace a busy machine cannot outlast: past the default 10 s the requests still in flight
        // are cut, and one cut while its answer was being written is a partial answer here.
        let server = try await DecisionServerProcess.start(arguments: ["--shutdown-grace", "120"])
        #expect(try await server.get("/decision?transactionId=ok1").status == 200)
        let load = Load(port: server.port, connections: 16)
        for _ in 0..<200 where load.answered < 2000 { try await Task.sleep(for: .milliseconds(50)) }
        server.signal(SIGTERM)
        // Under a load of 20 on two cores the exit took longer than 30 s.
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
}

/// Clients on kept-alive connections, each asking again once its answer is whole, until the server closes it.
final class Load: Sendable {
    struct Outcome: Sendable {
        /// Whole answers received.
        var answered = 0
        /// Connections that ended in the middle of an answer.
        var partial = 0
    }

    private let port: Int
    private let outcome = Mutex(Outcome())
    private let running = DispatchGroup()

    /// Starts `connections` clients of the server at `port`.
    init(port: Int, connections: Int) {
        self.port = port
        for _ in 0..<connections {
            running.enter()
            Thread.detachNewThread { [self] in
                run()
                running.leave()
            }
        }
    }

    var answered: Int { outcome.withLock { $0.answered } }

    /// Waits (blocking, at most a minute) until every connection has ended.
    func wait() -> Outcome {
        _ = running.wait(timeout: .now() + 60)
        return outcome.withLock { $0 }
    }

    private func run() {
        // A read bounded by 20 s gave up on an answer a busy server sent later, and logged: the
        // counts then differed. The server closes every connection as it exits.
        guard let connection = try? RawConnection(port: port, readTimeout: 600) else { return }
        let request = Array("GET /decision?transactionId=ok1 HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        while connection.send(request) {
            let (received, _) = connection.receive(until: RawHTTP.answerEnd)
            // Closed (or reset) before an answer: not accepted, unless part of one came.
            guard RawHTTP.answerEnd(received) != nil else {
                if !received.isEmpty { outcome.withLock { $0.partial += 1 } }
                return
            }
            guard received.starts(with: Array("HTTP/1.1 200 OK".utf8)) else {
                outcome.withLock { $0.partial += 1 }
                return
            }
            outcome.withLock { $0.answered += 1 }
        }
    }
}
