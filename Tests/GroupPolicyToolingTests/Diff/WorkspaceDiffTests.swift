import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy
@testable import GroupPolicyTooling

/// The diff of workspace memberships: which groups gain or lose membership in which workspace, and
/// become or stop being its administrators.
@Suite struct WorkspaceDiffTests {
    static let team = repositoryFile("Policies/team-workspace.json")

    /// The membership a version gives a scenario's group in a workspace.
    static func role(_ policy: Policy, _ workspace: String, _ scenario: Scenario) -> WorkspaceMembership.Role? {
        policy.evaluate(scenario.response, in: scenario.context).workspaces.first { $0.workspace.id == workspace }?.role
    }

    static func describe(_ row: PolicyDiff.WorkspaceRow) -> String {
        let roles = row.roles.map { "\($0.productID ?? "*"):\($0.role ?? "*")" }.joined(separator: ", ")
        return "\(row.workspace) \(row.oldRole?.rawValue ?? "none")->\(row.newRole?.rawValue ?? "none") "
            + "\(row.environment?.rawValue ?? "*") \(row.groupType ?? "*") \(row.groupID ?? "*") [\(roles)] "
            + "\(row.entitlements)"
    }

    /// Moving the team workspace from ORGANIZATION to CONSUMER groups changes no capability, and
    /// every organization seat holder leaves it (a CONSUMER group has no role entries, so none joins).
    @Test func movingAWorkspaceToAnotherGroupTypeShowsWhoLeavesIt() throws {
        let old = try Policy(contentsOfFile: Self.team)
        let text = try String(contentsOfFile: Self.team, encoding: .utf8)
        let products = #""productId": ["com.example.teams.pro", "com.example.teams.plus"] }"#
        let moved = text.replacingFirst(
            #""match": { "groupType": "ORGANIZATION", \#(products)"#,
            with: #""match": { "groupType": "CONSUMER", \#(products)"#
        )
        #expect(moved != text)
        let new = try policy(moved)
        let diff = try PolicyDiff(from: old, to: new)
        #expect(diff.rows.isEmpty)
        #expect(diff.scenarioCount == 90)
        let pro = "com.example.teams.pro"
        let plus = "com.example.teams.plus"
        #expect(
            diff.workspaceRows.map(Self.describe) == [
                "team admin->none * ORGANIZATION * [\(plus):ADMIN] []",
                "team admin->none * ORGANIZATION * [\(pro):ADMIN] []",
                "team member->none * ORGANIZATION * [\(plus):NONE] []",
                "team member->none * ORGANIZATION * [\(plus):UNNAMED_ROLE] []",
                "team member->none * ORGANIZATION * [\(pro):NONE] []",
                "team member->none * ORGANIZATION * [\(pro):UNNAMED_ROLE] []",
            ]
        )
        #expect(diff.workspaceScenarioCount == 45)
        for row in diff.workspaceRows {
            #expect(Self.role(old, row.workspace, row.example) == row.oldRole, "\(row)")
            #expect(Self.role(new, row.workspace, row.example) == row.newRole, "\(row)")
        }
    }

    /// A role becoming an administrator role shows as members becoming administrators; a new
    /// workspace as memberships gained.
    @Test func adminRolesAndNewWorkspacesShowAsRoleChangesAndGains() throws {
        func version(adminRoles: String, extra: String) throws -> Policy {
            try policy(
                capabilities: ["a"],
                rules: #"[ { "id": "r", "capabilities": ["a"] } ]"#,
                extra: #""workspaces": [ { "id": "w", "match": { "productId": "p" }\#(adminRoles) }\#(extra) ]"#
            )
        }
        let old = try version(adminRoles: "", extra: "")
        let new = try version(
            adminRoles: #", "adminRoles": ["ADMIN", "NONE"]"#,
            extra: #", { "id": "x", "match": { "groupType": "CONSUMER" } }"#
        )
        let diff = try PolicyDiff(from: old, to: new)
        #expect(diff.rows.isEmpty)
        #expect(
            diff.workspaceRows.map(Self.describe) == [
                "w member->admin * * * [p:NONE] []",
                "x none->member * CONSUMER * [] []",
            ]
        )
        for row in diff.workspaceRows {
            #expect(Self.role(old, row.workspace, row.example) == row.oldRole, "\(row)")
            #expect(Self.role(new, row.workspace, row.example) == row.newRole, "\(row)")
        }
        // And back: the same rows, reversed.
        let back = try PolicyDiff(from: new, to: old)
        #expect(
            back.workspaceRows.map(Self.describe) == [
                "w admin->member * * * [p:NONE] []",
                "x member->none * CONSUMER * [] []",
            ]
        )
    }

    /// An administrator in one version and a member in the other through different entries: the
    /// minimal scenario holds both.
    @Test func adminThroughOneProductMemberThroughAnother() throws {
        func version(_ product: String) throws -> Policy {
            try policy(
                capabilities: ["a"],
                rules: #"[ { "id": "r", "capabilities": ["a"] } ]"#,
                extra: #""workspaces": [ { "id": "w", "match": { "productId": "\#(product)" } } ]"#
            )
        }
        let old = try version("p")
        let new = try version("q")
        let diff = try PolicyDiff(from: old, to: new)
        let rows = diff.workspaceRows.map(Self.describe)
        #expect(rows.contains("w admin->member * * * [p:ADMIN, q:NONE] []"))
        #expect(rows.contains("w none->admin * * * [q:ADMIN] []"))
        #expect(rows.contains("w admin->none * * * [p:ADMIN] []"))
        for row in diff.workspaceRows {
            #expect(Self.role(old, row.workspace, row.example) == row.oldRole, "\(row)")
            #expect(Self.role(new, row.workspace, row.example) == row.newRole, "\(row)")
        }
    }

    /// A workspace that needs an entitlement in the new version: the rows say which.
    @Test func aRequiredEntitlementShowsInTheRows() throws {
        func version(_ requires: String) throws -> Policy {
            try policy(
                capabilities: ["a"],
                rules: #"[ { "id": "r", "capabilities": ["a"] } ]"#,
                extra: #""workspaces": [ { "id": "w", "match": { "groupType": "CONSUMER" }\#(requires) } ]"#
            )
        }
        let diff = try PolicyDiff(
            from: version(""),
            to: version(#", "requires": { "entitlements": ["pro"] }"#)
        )
        #expect(diff.workspaceRows.map(Self.describe) == ["w member->none * CONSUMER * [] []"])
        #expect(diff.workspaceRows.first?.example.entitlements == [])
    }

    /// Workspaces defined alike in both versions are not enumerated at all: no rows, no scenarios,
    /// and the JSON is what it was before workspaces were compared.
    @Test func unchangedWorkspacesCostNothing() throws {
        let old = try Policy(contentsOfFile: Self.team)
        let new = try Policy(
            contentsOfFile: repositoryFile("Tests/GroupPolicyCLITests/Fixtures/diff/team-workspace-reformatted.json")
        )
        let diff = try PolicyDiff(from: old, to: new)
        #expect(diff.workspaceRows.isEmpty)
        #expect(diff.workspaceScenarioCount == 0)
        #expect(!diff.jsonString(pretty: false).contains("workspace"))
    }

    /// The JSON of a workspace row: roles as `admin`, `member` or `none`, and the scenario class.
    ///
    /// Without a product condition, an `ADMIN` entry of any product makes an ENTERPRISE group's
    /// customer its administrator.
    @Test func workspaceRowsInJSON() throws {
        func version(_ type: String) throws -> Policy {
            try policy(
                capabilities: ["a"],
                rules: "[]",
                extra: #""workspaces": [ { "id": "w", "match": { "groupType": "\#(type)" } } ]"#
            )
        }
        let diff = try PolicyDiff(from: version("CONSUMER"), to: version("ENTERPRISE"))
        #expect(
            diff.jsonString(pretty: false)
                == #"{"verdict":"widens and narrows","capabilityVerdicts":{},"scenarios":12,"unnamed":{"groupType":"UNNAMED_TYPE","groupId":"unnamed-group","role":"UNNAMED_ROLE","productIds":["unnamed.product"]},"changes":[],"workspaceVerdicts":{"w":"widens and narrows"},"workspaceScenarios":21,"workspaceChanges":[{"workspace":"w","oldRole":"none","newRole":"admin","environment":"*","groupType":"ENTERPRISE","groupId":"*","roles":[{"productId":"*","role":"ADMIN"}],"entitlements":[],"example":{"context":{"environment":"Production","entitlements":[]},"response":{"groups":[{"groupId":"unnamed-group","groupType":"ENTERPRISE","roles":[{"productId":"unnamed.product","role":"ADMIN"}]}]}}},{"workspace":"w","oldRole":"none","newRole":"member","environment":"*","groupType":"ENTERPRISE","groupId":"*","roles":[],"entitlements":[],"example":{"context":{"environment":"Production","entitlements":[]},"response":{"groups":[{"groupId":"unnamed-group","groupType":"ENTERPRISE"}]}}},{"workspace":"w","oldRole":"member","newRole":"none","environment":"*","groupType":"CONSUMER","groupId":"*","roles":[],"entitlements":[],"example":{"context":{"environment":"Production","entitlements":[]},"response":{"groups":[{"groupId":"unnamed-group","groupType":"CONSUMER"}]}}}]}"#
        )
    }
}
