import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy
import ServingTestSupport
import Testing

/// The decision server's freshness flags: `--max-age` and `--refresh-ahead`, and stale answers'
/// age in the decision JSON and the decision log.
@Suite("Decision server: freshness")
struct DecisionServerFreshnessTests {
    @Test(
        "while a Retry-After holds, an expired answer is served stale with its age; a new customer gets 503",
        .requires(.pythonCryptography)
    )
    func staleWhileHeld() async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(
            appStore: store,
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
        #expect(
            try await store.log().map(\.path) == [
                "/groups/v1/currentGroups/ok1", "/groups/v1/currentGroups/ratelimitin_60000",
            ]
        )
    }

    @Test(
        "--refresh-ahead 0 --max-age TTL: a fixed time to live, fetched again when it passes",
        .requires(.pythonCryptography)
    )
    func fixedTimeToLive() async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(
            appStore: store,
            arguments: ["--cache-ttl", "1", "--max-age", "1", "--refresh-ahead", "0"]
        )
        #expect(try await server.get("/decision?transactionId=ok2").status == 200)
        try await Task.sleep(for: .milliseconds(1100))
        let again = try await server.get("/decision?transactionId=ok2")
        #expect(again.text.contains(#""groupsSource":"live""#))
        #expect(try await store.log().count == 2)
    }

    @Test(
        "bad freshness flags are refused with one line",
        arguments: [
            (["--max-age", "299"], "Error: --max-age must be at least --cache-ttl (300 seconds), not '299'"),
            (
                ["--cache-ttl", "7200", "--max-age", "3600"],
                "Error: --max-age must be at least --cache-ttl (7200 seconds), not '3600'"
            ),
            (["--max-age", "0"], "Error: --max-age must be a positive number of seconds, not '0'"),
            (
                ["--refresh-ahead", "1"],
                "Error: --refresh-ahead must be a fraction from 0 (never) to less than 1, not '1'"
            ),
            (
                ["--refresh-ahead", "-0.5"],
                "Error: --refresh-ahead must be a fraction from 0 (never) to less than 1, not '-0.5'"
            ),
            // The longest Int64 of seconds overflowed a shared cache's milliseconds on the first
            // decision; the configuration refuses it before the server starts.
            (
                ["--cache-ttl", "9223372036854775807", "--redis", "127.0.0.1:1"],
                "Error: --cache-ttl must be at most 10 years (315360000 seconds), "
                    + "not '9223372036854775807'"
            ),
            (
                ["--max-age", "315360001"],
                "Error: --max-age must be at most 10 years (315360000 seconds), "
                    + "not '315360001'"
            ),
            (
                ["--refresh-ahead", "nan"],
                "Error: --refresh-ahead must be a fraction from 0 (never) to less than 1, not 'nan'"
            ),
        ]
    )
    func badFlags(arguments: [String], message: String) async throws {
        let result = try await runProcess(
            DecisionServerProcess.binary(),
            ["--port", "0"] + arguments,
            environment: [
                "APP_STORE_KEY_ID": FakeAppStore.keyID, "APP_STORE_ISSUER_ID": FakeAppStore.issuerID,
                "APP_STORE_BUNDLE_ID": FakeAppStore.bundleID,
                "APP_STORE_PRIVATE_KEY_PATH": TestFiles.fixture("test-key.p8").path,
            ]
        )
        #expect(result.status == 2)
        #expect(result.standardError.split(separator: "\n").first.map(String.init) == message)
    }

    @Test("--help lists the freshness flags")
    func help() async throws {
        let result = try await runProcess(DecisionServerProcess.binary(), ["--help"])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("--max-age <seconds>"))
        #expect(result.standardOutput.contains("--refresh-ahead <fraction>"))
    }
}
