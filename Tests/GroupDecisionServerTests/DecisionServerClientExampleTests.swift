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

    /// The article's one ```python block.
    static func pythonExample() throws -> String {
        let text = try String(contentsOf: article, encoding: .utf8)
        let blocks = text.components(separatedBy: "```python\n").dropFirst()
        #expect(blocks.count == 1)
        let block = try #require(blocks.first?.components(separatedBy: "\n```").first)
        return block + "\n"
    }

    @Test("it prints the Decision the engine makes, and fails closed on a refusal")
    func pythonClientAgainstALiveServer() async throws {
        let script = URL(filePath: NSTemporaryDirectory()).appending(path: "client-\(UUID().uuidString).py")
        try Self.pythonExample().write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let server = try await DecisionServerProcess.start(appStore: try await FakeAppStore())
        let url = "http://127.0.0.1:\(server.port)"

        let served = try await runProcess(
            URL(filePath: "/usr/bin/env"),
            ["python3", script.path],
            environment: ["DECISION_SERVER_URL": url, "TRANSACTION_ID": "ok1", "PATH": "/usr/bin:/bin"]
        )
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

        let refused = try await runProcess(
            URL(filePath: "/usr/bin/env"),
            ["python3", script.path],
            environment: [
                "DECISION_SERVER_URL": url, "TRANSACTION_ID": "transactionIdNotFound", "PATH": "/usr/bin:/bin",
            ]
        )
        #expect(refused.status == 0, "\(refused.standardError)")
        #expect(refused.standardOutput == "no decision (transaction-id-not-found); retry after None s\n")
    }
}
