import Foundation
import ServingTestSupport
import Testing

/// The decision server refuses a duration flag beyond ten years.
///
/// The bug it pinned: `--reload-interval` had no upper bound. The largest Int64 of seconds started
/// the server ("group-decision-server listening on …"), then the first `Task.sleep(for:)` of the policy
/// store's reload loop traps ("Fatal error: Not enough bits to represent the passed value") and
/// the process dies of SIGILL within a second (`Process` reports status 4, the signal). Issue 31
/// asked every duration to be bounded with an `Error:` line and exit 2, as `--cache-ttl` now is;
/// `PolicyStore` itself bounds the interval from below only (`minimumReloadInterval`), so a
/// library user meets the same trap in `run()`.
@Suite("Decision server: duration flags are bounded, and refused naming the flag")
struct DecisionServerDurationFlagTests {
    @Test(
        "a reload interval beyond ten years is refused with one line and exit 2",
        arguments: ["9223372036854775807"]
    )
    func hugeReloadInterval(value: String) async throws {
        // Under `timeout`, so a server that starts and keeps running ends the test (status 124)
        // rather than hanging it.
        let result = try await runProcess(
            URL(filePath: "/usr/bin/timeout"),
            ["10", try DecisionServerProcess.binary().path, "--port", "0", "--reload-interval", value],
            environment: [
                "APP_STORE_KEY_ID": FakeAppStore.keyID, "APP_STORE_ISSUER_ID": FakeAppStore.issuerID,
                "APP_STORE_BUNDLE_ID": FakeAppStore.bundleID,
                "APP_STORE_PRIVATE_KEY_PATH": TestFiles.fixture("test-key.p8").path,
            ]
        )
        // Expected: refused before listening, as `--cache-ttl` is. On main: status 4 (SIGILL, the trap),
        // after "group-decision-server listening on …".
        #expect(result.status == 2)
        #expect(result.standardError.hasPrefix("Error: --reload-interval"))
        #expect(!result.standardOutput.contains("listening"))
    }

    @Test(
        "a --refresh-ahead fraction whose share of --cache-ttl is no time at all is refused naming the flag, not freshness.refreshAfter",
        arguments: ["1e-300", "1e-6"]
    )
    func tinyRefreshAhead(value: String) async throws {
        let result = try await runProcess(
            URL(filePath: "/usr/bin/timeout"),
            ["10", try DecisionServerProcess.binary().path, "--port", "0", "--refresh-ahead", value],
            environment: [
                "APP_STORE_KEY_ID": FakeAppStore.keyID, "APP_STORE_ISSUER_ID": FakeAppStore.issuerID,
                "APP_STORE_BUNDLE_ID": FakeAppStore.bundleID,
                "APP_STORE_PRIVATE_KEY_PATH": TestFiles.fixture("test-key.p8").path,
            ]
        )
        #expect(result.status == 2)
        #expect(
            result.standardError.hasPrefix(
                "Error: --refresh-ahead must be 0 (never) or a fraction giving at least a millisecond of "
                    + "--cache-ttl (300 seconds), not '\(value)'"
            )
        )
        #expect(!result.standardError.contains("refreshAfter"))
        #expect(!result.standardOutput.contains("listening"))
    }
}
