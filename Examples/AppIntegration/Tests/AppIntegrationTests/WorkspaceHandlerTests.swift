import AppIntegration
import AppStoreGroups
import Foundation
import GroupDecisions
import GroupDecisionsTesting
import GroupPolicy
import Testing

/// The app's handler with customers from a StaticGroupsSource: no key, no network.
@Suite("Workspace handler")
struct WorkspaceHandlerTests {
    static let pro = "com.example.teams.pro"

    static func organization(_ role: Role) -> GetCustomerGroupsResponse {
        GetCustomerGroupsResponse(groups: [
            GroupEntry(
                groupID: "900000000000000001",
                groupType: .organization,
                roles: [RoleEntry(productID: pro, role: role)]
            )
        ])
    }

    static func handler(_ source: StaticGroupsSource) throws -> WorkspaceHandler {
        let policies = try PolicyStore(contentsOf: PolicyFiles.directory)
        return WorkspaceHandler(decisions: try GroupDecisionService(policies: policies, source: source))
    }

    @Test("an admin sees every control, a seat holder views, a family group sees nothing")
    func decisionsFromStaticGroups() async throws {
        let source = StaticGroupsSource([
            "admin1": Self.organization(.admin),
            "member1": Self.organization(.unassigned),
            "family1": GetCustomerGroupsResponse(groups: [GroupEntry(groupID: "2", groupType: .consumer)]),
        ])
        let handler = try Self.handler(source)
        let revision = try PolicyStore(contentsOf: PolicyFiles.directory).revision
        #expect(
            await handler.respond(transactionID: "admin1")
                == .init(
                    status: 200,
                    body: #"{"controls":["view","manage-seats"],"role":"admin","revision":"\#(revision)"}"#
                )
        )
        #expect(
            await handler.respond(transactionID: "member1")
                == .init(status: 200, body: #"{"controls":["view"],"role":"member","revision":"\#(revision)"}"#)
        )
        #expect(
            await handler.respond(transactionID: "family1")
                == .init(status: 200, body: #"{"controls":[],"role":"none","revision":"\#(revision)"}"#)
        )
        // Cached: asking again costs no call.
        _ = await handler.respond(transactionID: "admin1")
        #expect(source.callCount == 3)
    }

    @Test("failures grant nothing: an unknown customer, a malformed id, Apple's 429")
    func failures() async throws {
        let source = StaticGroupsSource(["admin1": Self.organization(.admin)])
        source.fail("limited1", with: StaticGroupsSource.tooManyRequests(retryAfter: Date().addingTimeInterval(60)))
        let handler = try Self.handler(source)
        #expect(
            await handler.respond(transactionID: "nobody")
                == .init(status: 404, body: #"{"error":"transaction-id-not-found"}"#)
        )
        #expect(
            await handler.respond(transactionID: "not an id")
                == .init(status: 400, body: #"{"error":"invalid-argument"}"#)
        )
        #expect(
            await handler.respond(transactionID: "limited1")
                == .init(status: 503, body: #"{"error":"rate-limit-exceeded"}"#)
        )
        // The 429 holds every customer, and nothing more is asked of the source.
        #expect(
            await handler.respond(transactionID: "admin1")
                == .init(status: 503, body: #"{"error":"rate-limit-exceeded"}"#)
        )
        #expect(source.callCount == 2)
    }
}

/// Where the app's policies are, for the tests.
enum PolicyFiles {
    static let directory =
        URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Sources/AppIntegration/Policies").path

    /// A copy of the policies in a new temporary directory, which the caller removes.
    static func copy() throws -> URL {
        let copy = FileManager.default.temporaryDirectory.appending(path: "app-integration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: URL(filePath: directory).appending(path: "team.json"),
            to: copy.appending(path: "team.json")
        )
        return copy
    }
}

@Suite("Workspace handler: the JSON it writes is escaped")
struct WorkspaceHandlerJSONTests {
    @Test("a string with a quote, a backslash and control characters round-trips through a JSON parser")
    func hostileStringsRoundTrip() throws {
        let hostile = "AD\"MIN\\\u{01}\n\t\u{1F}é"
        let literal = WorkspaceHandler.jsonString(hostile)
        #expect(literal == #""AD\"MIN\\\u0001\n\t\u001fé""#)
        let parsed = try JSONSerialization.jsonObject(with: Data("[\(literal)]".utf8)) as? [String]
        #expect(parsed == [hostile])
    }

    @Test("an answer for a customer with an unknown role of Apple's is valid JSON")
    func unknownRoleAnswerIsValidJSON() async throws {
        let source = StaticGroupsSource([
            "odd1": WorkspaceHandlerTests.organization(Role(rawValue: "OWNER\"},\"controls\":[\"manage-seats\""))
        ])
        let response = await try WorkspaceHandlerTests.handler(source).respond(transactionID: "odd1")
        #expect(response.status == 200)
        let object = try JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any]
        #expect(object?["controls"] as? [String] == ["view"])
    }
}
