import AppStoreGroups
import Foundation
import GroupPolicy
import ServingTestSupport
import Testing

@testable import GroupDecisions

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The decision server on the library's decision service: a shared Redis, the decision log,
/// freshness in the JSON, and invalidation, all over HTTP on 127.0.0.1.
@Suite("Decision server at fleet scale")
struct DecisionServerFleetTests {
    @Test(
        "two servers sharing Redis fetch a customer once; the second serves it from the cache",
        .requires(.pythonCryptography),
        .requires(.redisServer)
    )
    func sharedRedis() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let store = try await FakeAppStore()
        let arguments = ["--redis", "127.0.0.1:\(redis.port)"]
        let first = try await DecisionServerProcess.start(appStore: store, arguments: arguments)
        let second = try await DecisionServerProcess.start(appStore: store, arguments: arguments)
        let live = try await first.get("/decision?transactionId=ok1")
        #expect(live.status == 200)
        #expect(live.groupsSource == "live")
        let cached = try await second.get("/decision?transactionId=ok1")
        #expect(cached.status == 200)
        #expect(cached.groupsSource == "cache")
        #expect(cached.groupsFetchedAt == live.groupsFetchedAt)
        #expect(cached.decisionText == live.decisionText)
        // Invalidation through one server reaches the other through Redis, within the 5 seconds
        // a server keeps an answer in memory before reading Redis again.
        #expect(try await second.post("/invalidate?transactionId=ok1").status == 200)
        let invalidated = ContinuousClock.now
        var source = try await first.get("/decision?transactionId=ok1").groupsSource
        while source == "cache", ContinuousClock.now - invalidated < .seconds(10) {
            try await Task.sleep(for: .milliseconds(200))
            source = try await first.get("/decision?transactionId=ok1").groupsSource
        }
        #expect(source == "live")
        #expect(try await second.get("/decision?transactionId=ok1").groupsSource == "cache")
        #expect(try await store.log().map(\.path) == Array(repeating: "/groups/v1/currentGroups/ok1", count: 2))
    }

    @Test(
        "POST /invalidate?groupId= through one server makes every member fetch again on both (real redis-server)",
        .requires(.pythonCryptography),
        .requires(.redisServer)
    )
    func invalidateGroup() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let store = try await FakeAppStore()
        let arguments = ["--redis", "127.0.0.1:\(redis.port)"]
        let first = try await DecisionServerProcess.start(appStore: store, arguments: arguments)
        let second = try await DecisionServerProcess.start(appStore: store, arguments: arguments)
        for customer in ["ok1", "ok2"] {
            #expect(try await first.get("/decision?transactionId=\(customer)").groupsSource == "live")
            #expect(try await second.get("/decision?transactionId=\(customer)").groupsSource == "cache")
        }
        let answer = try await second.post("/invalidate?groupId=900000000000000000")
        #expect(answer.status == 200)
        #expect(answer.text == #"{"invalidatedGroup":"900000000000000000"}"#)
        // Any group id Apple's answers may hold is one to invalidate.
        #expect(try await second.post("/invalidate?groupId=9%20").status == 200)
        for customer in ["ok1", "ok2"] {
            #expect(try await second.get("/decision?transactionId=\(customer)").groupsSource == "live")
        }
        // The first server reads Redis again within the 5 seconds it keeps an answer in memory, and
        // finds the answers the second fetched after the invalidation.
        let invalidated = ContinuousClock.now
        var fetchedAt = try await first.get("/decision?transactionId=ok1").groupsFetchedAt
        let refetched = try await second.get("/decision?transactionId=ok1").groupsFetchedAt
        while fetchedAt != refetched, ContinuousClock.now - invalidated < .seconds(10) {
            try await Task.sleep(for: .milliseconds(200))
            fetchedAt = try await first.get("/decision?transactionId=ok1").groupsFetchedAt
        }
        #expect(fetchedAt == refetched)
        #expect(try await store.log().count == 4)
    }

    @Test(
        "POST /invalidate?groupId= with a group id outside A-Z a-z 0-9 _ - that Apple sent: 200, and every server fetches its members again (real redis-server)",
        .requires(.pythonCryptography),
        .requires(.redisServer)
    )
    func invalidateUnusualGroup() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let store = try await FakeAppStore()
        let arguments = ["--redis", "127.0.0.1:\(redis.port)"]
        let first = try await DecisionServerProcess.start(appStore: store, arguments: arguments)
        let second = try await DecisionServerProcess.start(appStore: store, arguments: arguments)
        let live = try await first.get("/decision?transactionId=unusualgroup_1")
        #expect(live.status == 200)
        #expect(live.groupsSource == "live")
        #expect(try await second.get("/decision?transactionId=unusualgroup_1").groupsSource == "cache")
        // The group `team:42/é *`, percent-encoded in the query.
        let answer = try await second.post("/invalidate?groupId=team%3A42%2F%C3%A9%20%2A")
        #expect(answer.status == 200)
        #expect(answer.text.hasPrefix(#"{"invalidatedGroup":"team:42"#))
        for server in [first, second] {
            let after = try await server.get("/decision?transactionId=unusualgroup_1")
            #expect(after.status == 200)
            #expect(after.groupsFetchedAt != live.groupsFetchedAt)
        }
        #expect(try await store.log().count == 2)
    }

    @Test(
        "POST /invalidate?groupId= answers 200 once no server serves the old answer: the other's next GET fetches (real redis-server)",
        .requires(.pythonCryptography),
        .requires(.redisServer)
    )
    func invalidationReachedEveryServer() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let store = try await FakeAppStore()
        let arguments = ["--redis", "127.0.0.1:\(redis.port)"]
        let first = try await DecisionServerProcess.start(appStore: store, arguments: arguments)
        let second = try await DecisionServerProcess.start(appStore: store, arguments: arguments)
        let live = try await first.get("/decision?transactionId=ok1")
        #expect(live.groupsSource == "live")
        #expect(try await first.get("/decision?transactionId=ok1").groupsSource == "cache")
        let answer = try await second.post("/invalidate?groupId=900000000000000000")
        #expect(answer.status == 200)
        // At once, without waiting: the first server no longer serves its copy.
        let after = try await first.get("/decision?transactionId=ok1")
        #expect(after.status == 200)
        #expect(after.groupsSource == "live")
        #expect(after.groupsFetchedAt != live.groupsFetchedAt)
        #expect(try await store.log().map(\.path) == Array(repeating: "/groups/v1/currentGroups/ok1", count: 2))
    }

    @Test("freshness in the JSON: live, then cache with the same fetch time", .requires(.pythonCryptography))
    func freshness() async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(appStore: store)
        let live = try await server.get("/decision?transactionId=ok1")
        let fetchedAt = try #require(live.groupsFetchedAt)
        let revision = try Policy(contentsOf: DecisionServerTests.policies).revision
        let liveID = try #require(live.decisionID)
        #expect(
            live.text.hasSuffix(
                #","groupsSource":"live","groupsFetchedAt":"\#(fetchedAt)","policyRevision":"\#(revision)","#
                    + #""decisionId":"\#(liveID)"}"#
            )
        )
        #expect(DecisionIDs.isVersion7(liveID))
        #expect(fetchedAt.count == 24)
        #expect(fetchedAt.hasSuffix("Z"))
        let cached = try await server.get("/decision?transactionId=ok1")
        let cachedID = try #require(cached.decisionID)
        #expect(
            cached.text.hasSuffix(
                #","groupsSource":"cache","groupsFetchedAt":"\#(fetchedAt)","policyRevision":"\#(revision)","#
                    + #""decisionId":"\#(cachedID)"}"#
            )
        )
        #expect(liveID < cachedID)
    }

    @Test(
        "invalidation: one customer, then everyone; the next decisions fetch again",
        .requires(.pythonCryptography)
    )
    func invalidation() async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(appStore: store)
        for id in ["ok1", "ok2"] { #expect(try await server.get("/decision?transactionId=\(id)").status == 200) }
        let one = try await server.post("/invalidate?transactionId=ok1")
        #expect(one.status == 200)
        #expect(one.text == #"{"invalidated":"ok1"}"#)
        #expect(try await server.get("/decision?transactionId=ok1").groupsSource == "live")
        #expect(try await server.get("/decision?transactionId=ok2").groupsSource == "cache")
        let all = try await server.post("/invalidate?all=true")
        #expect(all.text == #"{"invalidated":"all"}"#)
        #expect(try await server.get("/decision?transactionId=ok2").groupsSource == "live")
        #expect(try await server.get("/invalidate?all=true").status == 405)
        #expect(try await server.post("/invalidate").status == 400)
        #expect(
            try await store.log().map(\.path) == [
                "/groups/v1/currentGroups/ok1", "/groups/v1/currentGroups/ok2", "/groups/v1/currentGroups/ok1",
                "/groups/v1/currentGroups/ok2",
            ]
        )
    }

    @Test(
        "--decision-log: one JSON line per decision, the id only as a salted hash",
        .requires(.pythonCryptography)
    )
    func decisionLog() async throws {
        let store = try await FakeAppStore()
        let path = NSTemporaryDirectory() + "decisions-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let salt = "a salt of sixteen bytes or more"
        let server = try await DecisionServerProcess.start(
            appStore: store,
            arguments: ["--decision-log", path],
            environment: ["DECISION_LOG_SALT": salt]
        )
        #expect(try await server.get("/decision?transactionId=ok1&entitlement=com.example.teams.pro").status == 200)
        #expect(try await server.get("/decision?transactionId=ok1&entitlement=com.example.teams.pro").status == 200)
        #expect(try await server.get("/decision?transactionId=unauthorized").status == 502)
        // Records are written off the request's path: wait for them.
        func written() -> [String] {
            ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while written().count < 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let lines = written()
        try #require(lines.count == 3)
        let hash = SHA256Hasher.hex(SHA256Hasher.hash(Array((salt + "ok1").utf8)))
        let capabilities =
            #"["team.templates","workspace.manage-seats","workspace.manage-settings","workspace.members","workspace.view"]"#
        let revision = try Policy(contentsOf: DecisionServerTests.policies).revision
        #expect(
            lines[0].contains(
                #""customer":"\#(hash)","environment":"Sandbox","policyRevision":"\#(revision)","source":"live","#
            )
        )
        #expect(lines[0].hasSuffix(#""capabilities":\#(capabilities)}"#))
        #expect(lines[1].contains(#""source":"cache","#))
        #expect(lines[2].hasSuffix(#""capabilities":[],"error":"unauthorized"}"#))
        for line in lines {
            #expect(!line.contains("ok1"))
            #expect(!line.contains("unauthorized\""[...]) || line.hasSuffix(#""error":"unauthorized"}"#))
        }
        #expect(!server.logLines().contains { $0.contains("DECISION_LOG_SALT") })
    }

    @Test(
        "a 429 at one server holds every server sharing Redis until the Retry-After instant",
        .requires(.pythonCryptography),
        .requires(.redisServer)
    )
    func sharedRateLimitGate() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let store = try await FakeAppStore()
        let arguments = ["--redis", "127.0.0.1:\(redis.port)"]
        let first = try await DecisionServerProcess.start(appStore: store, arguments: arguments)
        let second = try await DecisionServerProcess.start(appStore: store, arguments: arguments)
        let limited = try await first.get("/decision?transactionId=ratelimitin_3600000")
        #expect(limited.status == 503)
        let held = try await second.get("/decision?transactionId=ok1")
        #expect(held.status == 503)
        #expect(
            held.text.hasPrefix(
                #"{"error":{"code":"rate-limit-exceeded","message":"the App Store asked for no "#
                    + "customer-groups requests before this instant; none was sent"
            )
        )
        #expect(!held.text.contains("capabilities"))
        #expect(try await store.log().map(\.path) == ["/groups/v1/currentGroups/ratelimitin_3600000"])
    }

    @Test(
        "--redis where nothing listens, with a fallback share: no copy served without the invalidation count, fetched within the share, one log line, failures still fail closed",
        .requires(.pythonCryptography)
    )
    func unreachableRedis() async throws {
        let store = try await FakeAppStore()
        let dead = try LoopbackSocket(refusing: ())
        defer { withExtendedLifetime(dead) {} }
        let port = dead.port
        let server = try await DecisionServerProcess.start(
            appStore: store,
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
        #expect(
            try await store.log().map(\.path) == [
                "/groups/v1/currentGroups/ok1", "/groups/v1/currentGroups/ok1", "/groups/v1/currentGroups/unauthorized",
                "/groups/v1/currentGroups/ok1",
            ]
        )
    }

    @Test(
        "--decision-log -: the records on standard output, after the line saying where the server listens",
        .requires(.pythonCryptography)
    )
    func decisionLogToStandardOutput() async throws {
        let store = try await FakeAppStore()
        let salt = "a salt of sixteen bytes or more"
        let server = try await DecisionServerProcess.start(
            appStore: store,
            arguments: ["--decision-log", "-"],
            environment: ["DECISION_LOG_SALT": salt]
        )
        let live = try await server.get("/decision?transactionId=ok1&entitlement=com.example.teams.pro")
        #expect(live.status == 200)
        let fetchedAt = try #require(live.groupsFetchedAt)
        let decisionID = try #require(live.decisionID)
        #expect(try await server.get("/decision?transactionId=unauthorized").status == 502)
        let lines = try await server.outputLines(2)
        let revision = try Policy(contentsOf: DecisionServerTests.policies).revision
        func hash(_ id: String) -> String { SHA256Hasher.hex(SHA256Hasher.hash(Array((salt + id).utf8))) }
        let capabilities =
            #"["team.templates","workspace.manage-seats","workspace.manage-settings","workspace.members","workspace.view"]"#
        // Each line starts with {"time":"<24 characters>", then says the rest exactly: the served
        // decision's line carries the decisionId of the answer, the refusal's none.
        #expect(lines.map { $0.prefix(9) } == [#"{"time":""#, #"{"time":""#])
        #expect(
            lines[0].dropFirst(35)
                == #""decisionId":"\#(decisionID)","#
                + #""customer":"\#(hash("ok1"))","environment":"Sandbox","policyRevision":"\#(revision)","#
                + #""source":"live","fetchedAt":"\#(fetchedAt)","capabilities":\#(capabilities)}"#
        )
        #expect(
            lines[1].dropFirst(35)
                == #""customer":"\#(hash("unauthorized"))","environment":"Sandbox","policyRevision":"\#(revision)","#
                + #""capabilities":[],"error":"unauthorized"}"#
        )
        #expect(!server.logLines().contains { $0.contains(#""customer":"#) })
    }

    @Test(
        "two server processes: every decision has its own decisionId, each server's in order",
        .requires(.pythonCryptography)
    )
    func decisionIDsAcrossProcesses() async throws {
        let store = try await FakeAppStore()
        let first = try await DecisionServerProcess.start(appStore: store)
        let second = try await DecisionServerProcess.start(appStore: store)
        var ids: [[String]] = [[], []]
        for _ in 0..<20 {
            for (index, server) in [first, second].enumerated() {
                let answer = try await server.get("/decision?transactionId=ok1")
                #expect(answer.status == 200)
                ids[index].append(try #require(answer.decisionID))
            }
        }
        let all = ids.flatMap { $0 }
        #expect(Set(all).count == 40)
        #expect(all.allSatisfy(DecisionIDs.isVersion7))
        for serverIDs in ids {
            #expect(serverIDs == serverIDs.sorted())
        }
    }

    @Test(
        "--redis where nothing listens, by default: nothing is sent to the App Store, a customer is refused with Retry-After",
        .requires(.pythonCryptography)
    )
    func unreachableRedisSendsNothing() async throws {
        let store = try await FakeAppStore()
        let dead = try LoopbackSocket(refusing: ())
        defer { withExtendedLifetime(dead) {} }
        let port = dead.port
        let server = try await DecisionServerProcess.start(
            appStore: store,
            arguments: ["--redis", "127.0.0.1:\(port)"]
        )
        let refused = try await server.get("/decision?transactionId=ok1")
        #expect(refused.status == 503)
        #expect(
            refused.text.hasPrefix(
                #"{"error":{"code":"rate-limit-exceeded","message":"the shared cache that keeps the fleet's budget of "#
                    + #"5.0 customer-groups requests a second is unavailable, and this process sends nothing beyond "#
                    + #"what it granted; none was sent"#
            )
        )
        #expect(try await store.log().isEmpty)
    }
}
