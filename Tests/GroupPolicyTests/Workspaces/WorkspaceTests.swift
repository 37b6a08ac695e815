import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

/// The DocC article "Evaluation semantics", section "Workspace membership".
@Suite struct WorkspaceTests {
    static func workspacePolicy(_ workspaces: String, aliases: String = "") throws -> Policy {
        try policy(
            capabilities: ["view"],
            rules: #"[ { "id": "r", "capabilities": ["view"] } ]"#,
            extra: #""workspaces": "# + workspaces
                + (aliases.isEmpty ? "" : #", "sandbox": { "productAliases": "# + aliases + " }")
        )
    }

    static var groups: GetCustomerGroupsResponse {
        get throws {
            try response(
                """
                {"groups":[
                  {"groupId":"A","groupType":"ORGANIZATION","roles":[{"productId":"pro","role":"ADMIN"},{"productId":"plus","role":"NONE"}]},
                  {"groupId":"B","groupType":"ORGANIZATION","roles":[{"productId":"plus","role":"OWNER"}]},
                  {"groupId":"C","groupType":"CONSUMER"}
                ]}
                """
            )
        }
    }

    @Test func membershipAndRolePerGroupAndDefinition() throws {
        let loaded = try Self.workspacePolicy(
            """
            [ { "id": "team", "match": { "groupType": "ORGANIZATION", "productId": ["pro", "plus"] } },
              { "id": "plus-only", "match": { "productId": "plus" } },
              { "id": "family", "match": { "groupType": "CONSUMER" } },
              { "id": "owners", "match": { "productId": "plus" }, "adminRoles": ["OWNER"] } ]
            """
        )
        #expect(
            loaded.evaluate(try Self.groups).workspaces == [
                WorkspaceMembership(workspace: "team", groupID: "A", role: .admin),
                WorkspaceMembership(workspace: "plus-only", groupID: "A", role: .member),
                WorkspaceMembership(workspace: "owners", groupID: "A", role: .member),
                WorkspaceMembership(workspace: "team", groupID: "B", role: .member),
                WorkspaceMembership(workspace: "plus-only", groupID: "B", role: .member),
                WorkspaceMembership(workspace: "owners", groupID: "B", role: .admin),
                WorkspaceMembership(workspace: "family", groupID: "C", role: .member),
            ]
        )
    }

    @Test func withoutAProductEveryEntryCountsForTheRole() throws {
        let loaded = try Self.workspacePolicy(#"[ { "id": "any" } ]"#)
        #expect(
            loaded.evaluate(try Self.groups).workspaces == [
                WorkspaceMembership(workspace: "any", groupID: "A", role: .admin),
                WorkspaceMembership(workspace: "any", groupID: "B", role: .member),
                WorkspaceMembership(workspace: "any", groupID: "C", role: .member),
            ]
        )
        let memberships = loaded.evaluate(try Self.groups).memberships(in: "any")
        #expect(memberships.count == 3)
    }

    @Test func aProductWildcardNeedsSomeEntry() throws {
        let loaded = try Self.workspacePolicy(
            #"[ { "id": "seated", "match": { "productId": "*" }, "adminRoles": [] } ]"#
        )
        #expect(
            loaded.evaluate(try Self.groups).workspaces == [
                WorkspaceMembership(workspace: "seated", groupID: "A", role: .member),
                WorkspaceMembership(workspace: "seated", groupID: "B", role: .member),
            ]
        )
    }

    @Test func requiresAndGroupIDsApply() throws {
        let loaded = try Self.workspacePolicy(
            #"[ { "id": "beta", "match": { "groupId": ["B", "C"] }, "requires": { "environment": "Sandbox", "entitlements": ["beta"] } } ]"#
        )
        #expect(loaded.evaluate(try Self.groups, in: EvaluationContext(environment: .sandbox)).workspaces == [])
        #expect(
            loaded.evaluate(try Self.groups, in: EvaluationContext(environment: .sandbox, entitlements: ["beta"]))
                .workspaces == [
                    WorkspaceMembership(workspace: "beta", groupID: "B", role: .member),
                    WorkspaceMembership(workspace: "beta", groupID: "C", role: .member),
                ]
        )
    }

    @Test func productsAreMatchedAfterAliasing() throws {
        let loaded = try Self.workspacePolicy(
            #"[ { "id": "team", "match": { "productId": "pro" } } ]"#,
            aliases: #"{ "example.productId.one": "pro" }"#
        )
        let placeholder = GetCustomerGroupsResponse.sandboxPlaceholder
        #expect(
            loaded.evaluate(placeholder, in: EvaluationContext(environment: .sandbox)).workspaces == [
                WorkspaceMembership(workspace: "team", groupID: "900000000000000000", role: .admin)
            ]
        )
        // In Production the placeholder group is no workspace member.
        #expect(loaded.evaluate(placeholder, in: EvaluationContext(environment: .production)).workspaces == [])
    }
}
