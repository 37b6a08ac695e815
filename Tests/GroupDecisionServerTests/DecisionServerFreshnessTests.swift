import Foundation
import ServingTestSupport
import Testing

/// The decision server's freshness flags: `--max-age` and `--refresh-ahead`, and stale answers'
/// age in the decision JSON and the decision log.
@Suite("Decision server: freshness", .requires(.pythonCryptography))
struct DecisionServerFreshnessTests {
    @Test("while a Retry-After holds, an expired answer is served stale with its age; a new customer gets 503")
    func staleWhileHeld() async throws {
        let server = try await DecisionServerProcess.start(
            arguments: ["--cache-ttl", "1", "--refresh-ahead", "0", "--decision-log", "-"]
        )
        let fresh = try await server.get("/decision?transactionId=ok1")
        #expect(fresh.status == 200)
        #expect(!fresh.text.contains("groupsStaleReason"))
        try await Task.sleep(for: .milliseconds(1100))
        // A 429 holding Get Customer Groups for a minute.
        #expect(try await server.get("/decision?transactionId=ratelimitin_60000").status == 503)
        let stale = try await server.get("/decision?transactionId=ok1")
        #expect(stale.status == 200)
        #expect(stale.text.contains(#""groupsSource":"stale","#))
        let age = try #require(
            stale.text.firstMatch(of: /"groupsStaleReason":"budget","groupsAgeMilliseconds":([0-9]+)}$/)
        )
        #expect((1100...60_000).contains(Int(age.1) ?? 0))
        let refused = try await server.get("/decision?transactionId=ok2")
        #expect(refused.status == 503)
        #expect(refused.text.hasPrefix(#"{"error":{"code":"rate-limit-exceeded","#))
        let lines = try await server.outputLines(4)
        #expect(lines[0].contains(#""source":"live""#))
        #expect(!lines[0].contains("staleReason"))
        #expect(lines[2].contains(#""source":"stale","fetchedAt":"#))
        #expect(lines[2].contains(#","staleReason":"budget","ageMilliseconds":\#(age.1),"capabilities":"#))
        let fetched = ["ok1", "ratelimitin_60000"]
        #expect(try await server.appStore.log().map(\.path) == fetched.map { "/groups/v1/currentGroups/\($0)" })
    }

    /// The time to live comes from its variable, which a server with only `--max-age 1` would refuse (below the default
    /// 300 s); by default an answer past three quarters of it is refreshed ahead, with the refresh's own token.
    @Test(
        "an answer is reused for its time to live (from GROUP_DECISION_SERVER_CACHE_TTL), then fetched again; --refresh-ahead 0 --max-age TTL is a fixed time to live",
        arguments: [[], ["--max-age", "1", "--refresh-ahead", "0"]]
    )
    func timeToLive(arguments: [String]) async throws {
        let server = try await DecisionServerProcess.start(
            arguments: arguments,
            environment: ["GROUP_DECISION_SERVER_CACHE_TTL": "1", "GROUP_DECISION_SERVER_HOST": "127.0.0.1"]
        )
        #expect(try await server.get("/decision?transactionId=ok2").status == 200)
        try await Task.sleep(for: .milliseconds(1100))
        let again = try await server.get("/decision?transactionId=ok2")
        #expect(again.text.contains(#""groupsSource":"live""#))
        #expect(try await server.appStore.log().count == 2)
    }
}
