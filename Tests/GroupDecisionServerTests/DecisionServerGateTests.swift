import Foundation
import ServingTestSupport
import Testing

/// The decision server on the library's rate-limit gate: nothing malformed spends the budget, member listings have a
/// budget and gate of their own, and a failed invalidation says what to do without the shared cache's words.
@Suite("Decision server and the rate-limit gate", .requires(.pythonCryptography))
struct DecisionServerGateTests {
    @Test("whyNot of an undeclared capability, and malformed ids, are refused before anything goes upstream")
    func refusedBeforeTheBudget() async throws {
        let server = try await DecisionServerProcess.start(arguments: ["--requests-per-second", "1"])
        for _ in 0..<10 {
            #expect(try await server.get("/decision?transactionId=ok1&whyNot=team.template").status == 400)
            let malformed = try await server.get("/decision?transactionId=not%20an%20id")
            #expect(malformed.status == 400)
            #expect(malformed.text.hasPrefix(#"{"error":{"code":"invalid-argument","#))
        }
        #expect(try await server.appStore.log().isEmpty)
        // The budget of one request a second is whole: the first valid customer is served.
        #expect(try await server.get("/decision?transactionId=ok1").status == 200)
        #expect(try await server.appStore.log().map(\.path) == ["/groups/v1/currentGroups/ok1"])
    }

    /// The server waits up to a second (its `maximumRateLimitWait`) for the gate to open.
    ///
    /// It does not refuse the caller, and nothing goes upstream before the instant. The wait is
    /// proved only when the request left before the instant: on a machine so busy that it did not,
    /// the hold is asked again (each 429 names a new instant), and never once in five is a failure.
    @Test("a request within a second of a 429's Retry-After instant waits for it and is served")
    func shortHoldIsWaitedOut() async throws {
        let server = try await DecisionServerProcess.start()
        for _ in 0..<5 {
            let before = try await server.appStore.log().count
            #expect(try await server.get("/decision?transactionId=ratelimitin_1000").status == 503)
            let sent = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(try await server.get("/decision?transactionId=ok1").status == 200)
            let requests = Array(try await server.appStore.log().dropFirst(before))
            try #require(
                requests.map(\.path) == ["/groups/v1/currentGroups/ratelimitin_1000", "/groups/v1/currentGroups/ok1"]
            )
            #expect(requests[1].timeMs >= requests[0].timeMs + 1000)
            if sent < requests[0].timeMs + 1000 { return }
            // The customer's answer is cached now: the next round asks for it again upstream.
            #expect(try await server.post("/invalidate?transactionId=ok1").status == 200)
        }
        Issue.record("in five rounds, the request never left within the second of the hold")
    }

    @Test("/workspace/members spends a budget of its own: a burst at one request a second sends about one a second")
    func membersBudget() async throws {
        let server = try await DecisionServerProcess.start(arguments: ["--requests-per-second", "1"])
        let path = "/workspace/members?transactionId=ingroup_empty&groupId=empty"
        // The customer's groups are fetched once (one Get Customer Groups token) and cached.
        #expect(try await server.get("/decision?transactionId=ingroup_empty").status == 200)
        let started = ContinuousClock.now
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { try await server.get(path).status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let elapsed = ContinuousClock.now - started
        let members = try await server.appStore.log().filter { $0.path.hasPrefix("/groups/v1/group/") }.count
        // A full bucket holds one token, and one more comes each second.
        let allowed = 1 + Int(elapsed.components.seconds) + 1
        #expect(members <= allowed, "\(members) member requests in \(elapsed)")
        #expect(statuses.filter { $0 == 200 }.count == members)
        #expect(statuses.filter { $0 == 503 }.count == 8 - members)
    }

    @Test("a 429 from Get Group Members holds member listings only: decisions go on")
    func membersRateLimitHoldsMembersOnly() async throws {
        let server = try await DecisionServerProcess.start()
        let path = "/workspace/members?transactionId=ingroup_ratelimitin_3600000&groupId=ratelimitin_3600000"
        let limited = try await server.get(path)
        #expect(limited.status == 503)
        #expect(limited.text.hasPrefix(#"{"error":{"code":"rate-limit-exceeded","#))
        let seconds = try #require(limited.retryAfter.flatMap { Int($0) })
        #expect((3590...3600).contains(seconds))
        #expect(try await server.get("/decision?transactionId=ok1").status == 200)
        let held = try await server.get(path)
        #expect(held.status == 503)
        #expect(
            held.text.hasPrefix(
                #"{"error":{"code":"rate-limit-exceeded","message":"the App Store asked for no group-members requests before this instant; none was sent"#
            )
        )
        #expect(
            try await server.appStore.log().map(\.path) == [
                "/groups/v1/currentGroups/ingroup_ratelimitin_3600000",
                "/groups/v1/group/ratelimitin_3600000?limit=100",
                "/groups/v1/currentGroups/ok1",
            ]
        )
        let logged = server.logLines().filter { $0.hasPrefix("the App Store answered 429") }
        #expect(logged.count == 1)
        #expect(
            logged.first?.hasPrefix("the App Store answered 429 for group-members in the Sandbox environment: ") == true
        )
    }

    /// The log line is asked whole.
    ///
    /// Redis refuses a disabled command with an error quoting its first 128 bytes of arguments: for
    /// the EVAL every call here begins with, the script, not the key with the customer id in it, so
    /// the customer's absence alone passed a server that logged Redis's text.
    @Test(
        "a failed invalidation answers 503 without the shared cache's text, and no log line names the customer",
        .requires(.redisServer)
    )
    func invalidationFailureSaysNothingOfTheCache() async throws {
        let disabled = ["GET", "SET", "EVAL"].flatMap { ["--rename-command", $0, ""] }
        let redis = try await RedisServer.start(arguments: disabled)
        defer { redis.stop() }
        let server = try await DecisionServerProcess.start(
            arguments: ["--redis", "127.0.0.1:\(redis.port)", "--fallback-share", "0.25"]
        )
        let customer = "ok2000000123456789"
        #expect(try await server.get("/decision?transactionId=\(customer)").status == 200)
        let answer = try await server.post("/invalidate?transactionId=\(customer)")
        #expect(answer.status == 503)
        #expect(
            answer.text
                == #"{"error":{"code":"store-failure","message":"the shared cache did not take the invalidation: retry "#
                + #"(this server has forgotten the answers, other servers keep them until the cache takes it)"}}"#
        )
        // The store's errors name the command and Redis's error code, never its text.
        #expect(
            try await server.logLine { $0.hasPrefix("shared groups cache unavailable") }
                == "shared groups cache unavailable, serving from this process's cache (this line repeats at most "
                + "once a minute): Redis at 127.0.0.1:\(redis.port): EVAL read-answer-invalidations: the server "
                + "answered with an error (ERR)"
        )
        #expect(!server.logLines().contains { $0.contains(customer) }, "\(server.logLines())")
    }
}
