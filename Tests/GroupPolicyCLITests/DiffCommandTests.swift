import Foundation
import Testing

@Suite struct DiffCommandTests {
    static let fixtures = "Tests/GroupPolicyCLITests/Fixtures/diff/"

    @Test func twoFormattingsOfOnePolicyShowNothing() async throws {
        let output = try await CLIRunner.run([
            "diff", "Policies/team-workspace.json", Self.fixtures + "team-workspace-reformatted.json",
        ])
        #expect(output.status == 0)
        #expect(output.stderr == "")
        #expect(output.stdout == "no capability changes (90 scenarios compared)\n")
    }

    @Test func aChangeShowsAsATableAndAsJSON() async throws {
        let arguments = ["diff", "Policies/team-workspace.json", Self.fixtures + "team-workspace-changed.json"]
        let table = try await CLIRunner.run(arguments)
        #expect(table.status == 0)
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 8)
        #expect(
            lines.prefix(3) == [
                "CHANGE  CAPABILITY              ENVIRONMENT  GROUP TYPE    GROUP ID  ROLE ENTRIES                          ENTITLEMENTS",
                "+       workspace.export        Sandbox      ORGANIZATION  *         com.example.teams.pro:ADMIN           -",
                "+       workspace.manage-seats  *            ORGANIZATION  *         com.example.teams.plus:ADMIN          -",
            ]
        )
        #expect(lines.last?.hasPrefix("6 changes (2 added, 4 removed) in minimal scenarios of 234 compared") == true)

        let json = try await CLIRunner.run(arguments + ["--json"])
        #expect(json.status == 0)
        let object = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let changes = try #require(object["changes"] as? [[String: Any]])
        #expect(changes.count == 6)
        #expect(changes.first?["capability"] as? String == "workspace.export")
        #expect(changes.first?["environment"] as? String == "Sandbox")
        #expect(changes.first?["groupId"] as? String == "*")
    }

    @Test(arguments: [
        (
            ["diff", "Policies/team-workspace.json"],
            """
            Error: give exactly two policies, OLD and NEW
            Usage: group-policy diff <old> <new> [options]
              See 'group-policy diff --help' for more information.

            """
        ),
        (
            ["diff", "Policies/team-workspace.json", "Policies/team-workspace.json", "--budget", "10"],
            "Error: the diff's scenario space holds 90 scenarios, over the budget of 10 (raise --budget)\n"
        ),
        (["diff", "Policies/team-workspace.json", "nope.json"], "Error: cannot read nope.json: no such file\n"),
    ])
    func badUsageExitsTwo(_ arguments: [String], _ expected: String) async throws {
        let output = try await CLIRunner.run(arguments)
        #expect(output.status == 2)
        #expect(output.stdout == "")
        #expect(output.stderr == expected)
    }

    @Test func aPolicyThatDoesNotLoadExitsOne() async throws {
        let output = try await CLIRunner.run([
            "diff", "Policies/team-workspace.json", "Tests/GroupPolicyCLITests/Fixtures/typo-policy.json",
        ])
        #expect(output.status == 1)
        #expect(
            output.stderr.hasSuffix("Error: policy Tests/GroupPolicyCLITests/Fixtures/typo-policy.json does not load\n")
        )
    }
}
