import Foundation
import GroupPolicy
import ServingTestSupport
import Testing

/// The Python client of the DocC article "Calling the decision server", taken from the article
/// itself and run against a live server: what readers copy works.
@Suite("Decision server: the article's Python client", .requires(.pythonCryptography))
struct DecisionServerClientExampleTests {
    static let article = TestFiles.packageRoot.appending(
        path: "Sources/group-decision-server/GroupDecisionServer.docc/CallingTheDecisionServer.md"
    )

    @Test("it prints the Decision the engine makes, and fails closed on a refusal")
    func pythonClientAgainstALiveServer() async throws {
        let script = URL(filePath: NSTemporaryDirectory()).appending(path: "client-\(UUID().uuidString).py")
        // The article's one ```python block.
        let blocks = try String(contentsOf: Self.article, encoding: .utf8).components(separatedBy: "```python\n")
        #expect(blocks.count == 2)
        let example = try #require(blocks.last?.components(separatedBy: "\n```").first)
        try (example + "\n").write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let server = try await DecisionServerProcess.start()
        let url = "http://127.0.0.1:\(server.port)"

        func run(_ transactionID: String) async throws -> ProcessResult {
            try await runProcess(
                URL(filePath: "/usr/bin/env"),
                ["python3", script.path],
                environment: ["DECISION_SERVER_URL": url, "TRANSACTION_ID": transactionID, "PATH": "/usr/bin:/bin"]
            )
        }
        let served = try await run("ok1")
        #expect(served.status == 0, "\(served.standardError)")
        let response = try await FakeAppStore().client().customerGroups(anyTransactionID: "ok1")
        let expected = try Policy(contentsOf: DecisionServerProcess.policies).evaluate(
            response,
            in: EvaluationContext(environment: .sandbox, entitlements: ["com.example.teams.pro"])
        )
        #expect(
            served.standardOutput == """
                capabilities: \(expected.capabilities.sorted().joined(separator: ", "))
                workspace team in group 900000000000000000: admin
                groups from: live

                """
        )

        let refused = try await run("transactionIdNotFound")
        #expect(refused.status == 0, "\(refused.standardError)")
        #expect(refused.standardOutput == "no decision (transaction-id-not-found); retry after None s\n")
    }
}
