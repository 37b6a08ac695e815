import Foundation
import GroupPolicy
import ServingTestSupport
import Testing

@testable import GroupDecisions

/// The decision server on the library's decision service: invalidation, one Redis shared by
/// several servers (or none reachable), decision ids and the decision log, over HTTP on 127.0.0.1.
@Suite("Decision server: invalidation, a shared Redis, and the decision log", .requires(.pythonCryptography))
struct DecisionServerFleetTests {
    /// Two servers share one redis-server: the second serves the first's fetch from Redis, and an
    /// invalidation through it answers 200 only once no server serves the old answer: the first
    /// server's next decision fetches again at once, and the second serves that new fetch.
    @Test(
        "POST /invalidate through one server of two sharing Redis: the other's next decision fetches again (real redis-server)",
        .requires(.redisServer),
        arguments: [
            ("transactionId=ok1", "ok1", #"{"invalidated":"ok1"}"#),
            ("groupId=900000000000000000", "ok1", #"{"invalidatedGroup":"900000000000000000"}"#),
            // A group id outside A-Z a-z 0-9 _ - that Apple sent: `team:42/é *`, percent-encoded.
            ("groupId=team%3A42%2F%C3%A9%20%2A", "unusualgroup_1", #"{"invalidatedGroup":"team:42/é *"}"#),
        ]
    )
    func invalidationReachesEveryServer(query: String, customer: String, body: String) async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let store = try await FakeAppStore()
        let arguments = ["--redis", "127.0.0.1:\(redis.port)"]
        let first = try await DecisionServerProcess.start(appStore: store, arguments: arguments)
        let second = try await DecisionServerProcess.start(appStore: store, arguments: arguments)
        let path = "/decision?transactionId=\(customer)"
        let live = try await first.get(path)
        #expect(live.status == 200)
        #expect(live.groupsSource == "live")
        let cached = try await second.get(path)
        #expect(cached.groupsSource == "cache")
        #expect(cached.groupsFetchedAt == live.groupsFetchedAt)
        #expect(cached.decisionText == live.decisionText)
        let answer = try await second.post("/invalidate?\(query)")
        #expect(answer.status == 200)
        #expect(answer.text == body)
        // At once, without waiting: the first server no longer serves its copy.
        let after = try await first.get(path)
        #expect(after.status == 200)
        #expect(after.groupsSource == "live")
        #expect(after.groupsFetchedAt != live.groupsFetchedAt)
        let shared = try await second.get(path)
        #expect(shared.groupsSource == "cache")
        #expect(shared.groupsFetchedAt == after.groupsFetchedAt)
        #expect(try await store.log().map(\.path) == Array(repeating: "/groups/v1/currentGroups/\(customer)", count: 2))
    }

    @Test(
        "--redis where nothing listens: by default nothing is sent to the App Store, a customer is refused with Retry-After; with a fallback share, no copy served without the invalidation count, fetched within the share, one log line, failures still fail closed"
    )
    func unreachableRedis() async throws {
        let dead = try LoopbackSocket(refusing: ())
        defer { withExtendedLifetime(dead) {} }
        let port = dead.port
        let strict = try await DecisionServerProcess.start(arguments: ["--redis", "127.0.0.1:\(port)"])
        let refused = try await strict.get("/decision?transactionId=ok1")
        #expect(refused.status == 503)
        #expect(refused.retryAfter != nil)
        #expect(
            refused.text.hasPrefix(
                #"{"error":{"code":"rate-limit-exceeded","message":"the shared cache that keeps the fleet's budget of "#
                    + #"5.0 customer-groups requests a second is unavailable, and this process sends nothing beyond "#
                    + #"what it granted; none was sent"#
            )
        )
        #expect(try await strict.appStore.log().isEmpty)
        let server = try await DecisionServerProcess.start(
            arguments: ["--redis", "127.0.0.1:\(port)", "--fallback-share", "0.25"]
        )
        let live = try await server.get("/decision?transactionId=ok1")
        #expect(live.status == 200)
        #expect(live.groupsSource == "live")
        // Kept here, but served only under a reading of the invalidation count, which Redis cannot
        // give: another server's invalidation may have completed meanwhile. Fetched again, within
        // this server's share of the budget (1.25 a second: the token is due within the second).
        let again = try await server.get("/decision?transactionId=ok1")
        #expect(again.status == 200)
        #expect(again.groupsSource == "live")
        #expect(again.decisionText == live.decisionText)
        let failed = try await server.get("/decision?transactionId=unauthorized")
        #expect(failed.status == 502)
        #expect(failed.text.hasPrefix(#"{"error":{"code":"unauthorized","#))
        #expect(!failed.text.contains("capabilities"))
        // Redis was not told: the notification handler must hear a failure and retry.
        #expect(try await server.post("/invalidate?transactionId=ok1").status == 503)
        #expect(try await server.get("/decision?transactionId=ok1").groupsSource == "live")
        #expect(server.logLines().filter { $0.contains("shared groups cache unavailable") }.count == 1)
        let fetched = ["ok1", "ok1", "unauthorized", "ok1"]
        #expect(try await server.appStore.log().map(\.path) == fetched.map { "/groups/v1/currentGroups/\($0)" })
    }

    @Test(
        "--decision-log: one JSON line per decision on standard output, after the line saying where the server listens; the id only as a salted hash"
    )
    func decisionLog() async throws {
        let salt = "a salt of sixteen bytes or more"
        let server = try await DecisionServerProcess.start(
            arguments: ["--decision-log", "-"],
            environment: ["DECISION_LOG_SALT": salt]
        )
        let live = try await server.get("/decision?transactionId=ok1&entitlement=com.example.teams.pro")
        #expect(live.status == 200)
        let fetchedAt = try #require(live.groupsFetchedAt)
        let decisionID = try #require(live.decisionID)
        #expect(try await server.get("/decision?transactionId=ok1&entitlement=com.example.teams.pro").status == 200)
        #expect(try await server.get("/decision?transactionId=unauthorized").status == 502)
        let lines = try await server.outputLines(3)
        let revision = try Policy(contentsOf: DecisionServerProcess.policies).revision
        func hash(_ id: String) -> String { SHA256Hasher.hex(SHA256Hasher.hash(Array((salt + id).utf8))) }
        let capabilities =
            #"["team.templates","workspace.manage-seats","workspace.manage-settings","workspace.members","workspace.view"]"#
        // Each line starts with {"time":"<24 characters>", then says the rest exactly: the served
        // decision's line carries the decisionId of the answer, the refusal's none.
        #expect(lines.map { $0.prefix(9) } == Array(repeating: #"{"time":""#, count: 3))
        #expect(
            lines[0].dropFirst(35)
                == #""decisionId":"\#(decisionID)","#
                + #""customer":"\#(hash("ok1"))","environment":"Sandbox","policyRevision":"\#(revision)","#
                + #""source":"live","fetchedAt":"\#(fetchedAt)","capabilities":\#(capabilities)}"#
        )
        #expect(lines[1].contains(#""customer":"\#(hash("ok1"))","#) && lines[1].contains(#""source":"cache","#))
        #expect(
            lines[2].dropFirst(35)
                == #""customer":"\#(hash("unauthorized"))","environment":"Sandbox","policyRevision":"\#(revision)","#
                + #""capabilities":[],"error":"unauthorized"}"#
        )
        #expect(!lines.contains { $0.contains("ok1") })
        #expect(!server.logLines().contains { $0.contains(#""customer":"#) || $0.contains("DECISION_LOG_SALT") })
    }

    /// `POST /invalidate` takes one target: a request naming two was answered 200 while one was skipped without a word.
    @Test(
        "invalidation: one customer, then everyone, and the next decisions fetch again; a request naming more than one target is refused, and nothing is forgotten"
    )
    func invalidation() async throws {
        let server = try await DecisionServerProcess.start()
        for id in ["ok1", "ok2"] { #expect(try await server.get("/decision?transactionId=\(id)").status == 200) }
        for (query, named) in [
            ("transactionId=ok2&groupId=g1", "transactionId and groupId"), ("groupId=g1&all=true", "groupId and all"),
            ("transactionId=ok2&groupId=g1&all=true", "transactionId and groupId and all"),
        ] {
            let answer = try await server.post("/invalidate?\(query)")
            #expect(answer.status == 400)
            #expect(
                answer.text
                    == #"{"error":{"code":"bad-request","message":"give one of transactionId, groupId or all=true, not \#(named)"}}"#
            )
        }
        let one = try await server.post("/invalidate?transactionId=ok1")
        #expect(one.status == 200)
        #expect(one.text == #"{"invalidated":"ok1"}"#)
        #expect(try await server.get("/decision?transactionId=ok1").groupsSource == "live")
        // Kept through the refused requests too.
        #expect(try await server.get("/decision?transactionId=ok2").groupsSource == "cache")
        // Any group id Apple's answers may hold is one to invalidate.
        let group = try await server.post("/invalidate?groupId=9%20")
        #expect(group.text == #"{"invalidatedGroup":"9 "}"#)
        let all = try await server.post("/invalidate?all=true")
        #expect(all.text == #"{"invalidated":"all"}"#)
        #expect(try await server.get("/decision?transactionId=ok2").groupsSource == "live")
        #expect(try await server.get("/invalidate?all=true").status == 405)
        #expect(try await server.post("/invalidate").status == 400)
        #expect(try await server.post("/invalidate?transactionId=not%20an%20id").status == 400)
        let fetched = ["ok1", "ok2", "ok1", "ok2"]
        #expect(try await server.appStore.log().map(\.path) == fetched.map { "/groups/v1/currentGroups/\($0)" })
    }
}
