import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy
@testable import GroupPolicyTooling

@Suite struct PolicyDiffTests {
    static let team = repositoryFile("Policies/team-workspace.json")
    static let fixtures = repositoryFile("Tests/GroupPolicyCLITests/Fixtures/diff/")

    @Test func twoFormattingsOfOnePolicyHaveNoChanges() throws {
        let diff = try PolicyDiff(
            from: Policy(contentsOfFile: Self.team),
            to: Policy(contentsOfFile: Self.fixtures + "team-workspace-reformatted.json")
        )
        #expect(diff.rows.isEmpty)
        #expect(diff.scenarioCount == 90)
    }

    /// The changed policy lets Plus administrators manage seats, drops the Sandbox export denial,
    /// and hides the member list from NONE entries when the Pro entitlement is verified.
    @Test func aHandMadeChangeShowsExactlyItsCells() throws {
        let old = try Policy(contentsOfFile: Self.team)
        let new = try Policy(contentsOfFile: Self.fixtures + "team-workspace-changed.json")
        let diff = try PolicyDiff(from: old, to: new)
        let rows = diff.rows.map { row in
            "\(row.change) \(row.capability) \(row.environment?.rawValue ?? "*") \(row.groupType ?? "*") "
                + "\(row.groupID ?? "*") [\(row.roles.map { "\($0.productID ?? "*"):\($0.role ?? "*")" }.joined(separator: ", "))] "
                + "\(row.entitlements)"
        }
        let pro = "com.example.teams.pro"
        let plus = "com.example.teams.plus"
        #expect(
            rows == [
                "added workspace.export Sandbox ORGANIZATION * [\(pro):ADMIN] []",
                "added workspace.manage-seats * ORGANIZATION * [\(plus):ADMIN] []",
                "removed workspace.members * ORGANIZATION * [\(plus):NONE] [\"\(pro)\"]",
                "removed workspace.members * ORGANIZATION * [\(pro):NONE] [\"\(pro)\"]",
                // Any named product as ADMIN (or an unknown role) beside a NONE seat of a product
                // neither version names: '*' merges Pro and Plus, which give the same row.
                "removed workspace.members * ORGANIZATION * [unnamed.product:NONE, *:ADMIN] [\"\(pro)\"]",
                "removed workspace.members * ORGANIZATION * [unnamed.product:NONE, *:UNNAMED_ROLE] [\"\(pro)\"]",
            ]
        )
        // Each row's example really differs as stated.
        for row in diff.rows {
            let before = old.evaluate(row.example.response, in: row.example.context).capabilities.contains(
                row.capability
            )
            let after = new.evaluate(row.example.response, in: row.example.context).capabilities.contains(
                row.capability
            )
            #expect((before, after) == (row.change == .added ? (false, true) : (true, false)), "\(row)")
        }
    }

    @Test func overTheBudgetIsAnError() throws {
        let policy = try Policy(contentsOfFile: Self.team)
        #expect {
            try PolicyDiff(from: policy, to: policy, budget: 89)
        } throws: { error in
            (error as? GroupPolicyError)?.code == .overBudget
                && (error as? GroupPolicyError)?.message
                    == "the diff's scenario space holds 90 scenarios, over the budget of 89"
        }
    }

    /// Three group types by three (environment, group id) pairs, one entry-less scenario each.
    @Test func jsonRowsCarryAnyAsStarAndAnExample() throws {
        let diff = try PolicyDiff(
            from: policy(
                capabilities: ["a"],
                rules: #"[ { "id": "r", "match": { "groupType": "CONSUMER" }, "capabilities": ["a"] } ]"#
            ),
            to: policy(capabilities: ["a"], rules: "[]")
        )
        #expect(
            diff.jsonString(pretty: false)
                == #"{"verdict":"narrows","capabilityVerdicts":{"a":"narrows"},"scenarios":9,"unnamed":{"groupType":"UNNAMED_TYPE","groupId":"unnamed-group","role":"UNNAMED_ROLE","productIds":["unnamed.product"]},"changes":[{"change":"removed","capability":"a","environment":"*","groupType":"CONSUMER","groupId":"*","roles":[],"entitlements":[],"example":{"context":{"environment":"Production","entitlements":[]},"response":{"groups":[{"groupId":"unnamed-group","groupType":"CONSUMER"}]}}}]}"#
        )
    }
}
