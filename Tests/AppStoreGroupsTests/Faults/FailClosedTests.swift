import Foundation
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups

/// The README's "Failure semantics": when groups cannot be fetched, the recommended handling
/// grants nothing, and the line it logs holds no secret.
@Suite("Fail closed")
struct FailClosedTests {
    /// The README's recommended handling, as written there: on any error, log it and evaluate an empty response.
    static func decision(
        for transactionID: String,
        client: AppStoreGroupsClient,
        policy: Policy,
        context: EvaluationContext,
        log: (String) -> Void
    ) async -> Decision {
        let response: GetCustomerGroupsResponse
        do {
            response = try await client.customerGroups(anyTransactionID: transactionID)
        } catch {
            log("groups unavailable (\(error.code)): \(error)")  // never holds the key or a token
            response = GetCustomerGroupsResponse(groups: [])  // fail closed: no group capabilities
        }
        return policy.evaluate(response, in: context)
    }

    /// Every bundled policy, on its own and as one set.
    static func policies() throws -> [Policy] {
        let directory = TestFiles.packageRoot.appending(path: "Policies").path
        return [
            try Policy(contentsOfFile: directory + "/team-workspace.json"),
            try Policy(contentsOfFile: directory + "/family-sharing.json"),
            try Policy(contentsOfDirectory: directory),
        ]
    }

    /// Both environments, with every entitlement the bundled policies know.
    static let contexts = [StoreEnvironment.production, .sandbox].map {
        EvaluationContext(
            environment: $0,
            entitlements: ["com.example.teams.pro", "com.example.teams.plus", "com.example.recipes.premium"]
        )
    }

    @Test("an empty response grants nothing under any bundled policy, in any environment")
    func emptyGrantsNothing() throws {
        for policy in try Self.policies() {
            for context in Self.contexts {
                let decision = policy.evaluate(GetCustomerGroupsResponse(groups: []), in: context)
                #expect(decision.capabilities.isEmpty)
                #expect(decision.groups.isEmpty)
                #expect(decision.workspaces.isEmpty)
                #expect(decision.grants.isEmpty)
            }
        }
    }

    @Test(
        "a failed fetch (refused, 429 storm) grants nothing, and the logged line holds no secret",
        .requires(.pythonCryptography)
    )
    func failedFetchGrantsNothing() async throws {
        let server = try await FakeAppStore()
        let refusing = try RefusingPort()
        // Each attempt must fail the way it names (refused, 429), never as a timeout: with 3 s a refused connection on
        // a busy machine came back as a timeout, so the attempts get the fault tests' room for answers.
        let timeout = FetcherFaultTests.answerTimeout
        let clients = [
            (try FetcherFaultTests.client(refusing.baseURL, timeout: timeout, timeSource: .system), "ok"),
            (try server.client(retryPolicy: quickRetries, timeout: timeout), "ratelimitin_100"),
        ]
        let policy = try Policy(contentsOfDirectory: TestFiles.packageRoot.appending(path: "Policies").path)
        var lines: [String] = []
        for (client, transactionID) in clients {
            let decision = await Self.decision(
                for: transactionID,
                client: client,
                policy: policy,
                context: Self.contexts[1],
                log: { lines.append($0) }
            )
            #expect(decision.capabilities.isEmpty)
            #expect(decision.workspaces.isEmpty)
        }
        #expect(lines.count == 2)
        #expect(
            lines.first?.hasPrefix("groups unavailable (transport-failure): the request to 127.0.0.1 failed: ") == true
        )
        #expect(lines.last?.hasPrefix("groups unavailable (rate-limit-exceeded): the App Store answered ") == true)
        // The same server answering for real grants what the policy says: the empty decisions
        // above come from the failures, not from the policy.
        let answered = await Self.decision(
            for: "ok",
            client: try server.client(),
            policy: policy,
            context: Self.contexts[1],
            log: { lines.append($0) }
        )
        #expect(
            answered.capabilities.names == [
                "team.templates", "workspace.manage-seats", "workspace.manage-settings", "workspace.members",
                "workspace.view",
            ]
        )
        #expect(lines.count == 2)
        let scan = try SecretScan(tokens: try await server.log().compactMap(\.token))
        for line in lines { scan.check(line, "the logged line") }
        withExtendedLifetime(refusing) {}
    }
}
