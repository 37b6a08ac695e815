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
        #expect(output.stdout == "verdict: equivalent\nno capability changes (90 scenarios compared)\n")
    }

    @Test func aChangeShowsAsATableAndAsJSON() async throws {
        let arguments = ["diff", "Policies/team-workspace.json", Self.fixtures + "team-workspace-changed.json"]
        let table = try await CLIRunner.run(arguments)
        #expect(table.status == 0)
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 9)
        #expect(
            lines.prefix(4) == [
                "verdict: widens and narrows (3 capabilities: workspace.export widens, workspace.manage-seats widens, "
                    + "workspace.members narrows)",
                "CHANGE  CAPABILITY              ENVIRONMENT  GROUP TYPE    GROUP ID  ROLE ENTRIES                          ENTITLEMENTS",
                "+       workspace.export        Sandbox      ORGANIZATION  *         com.example.teams.pro:ADMIN           -",
                "+       workspace.manage-seats  *            ORGANIZATION  *         com.example.teams.plus:ADMIN          -",
            ]
        )
        #expect(lines.last?.hasPrefix("6 changes (2 added, 4 removed) in minimal scenarios of 234 compared") == true)

        let json = try await CLIRunner.run(arguments + ["--json"])
        #expect(json.status == 0)
        let object = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(json.stdout.hasPrefix("{\n  \"verdict\": \"widens and narrows\",\n"))
        #expect(
            object["capabilityVerdicts"] as? [String: String] == [
                "workspace.export": "widens", "workspace.manage-seats": "widens", "workspace.members": "narrows",
            ]
        )
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

    /// Moving the team workspace to CONSUMER groups changes no capability but every organization
    /// seat holder's membership: the text and the JSON say so.
    @Test func workspaceMembershipChangesShowBelowTheCapabilities() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/diff-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let text = try String(contentsOfFile: CLIRunner.packageRoot + "/Policies/team-workspace.json", encoding: .utf8)
        let products = #""productId": ["com.example.teams.pro", "com.example.teams.plus"] }"#
        let moved = text.replacingOccurrences(
            of: #""match": { "groupType": "ORGANIZATION", \#(products)"#,
            with: #""match": { "groupType": "CONSUMER", \#(products)"#
        )
        #expect(moved != text)
        #expect(FileManager.default.createFile(atPath: directory + "/moved.json", contents: Data(moved.utf8)))
        let arguments = ["diff", "Policies/team-workspace.json", directory + "/moved.json"]
        let table = try await CLIRunner.run(arguments)
        #expect(table.status == 0)
        #expect(table.stderr == "")
        #expect(
            table.stdout == """
                verdict: narrows (1 workspace: team narrows)
                no capability changes (90 scenarios compared)

                CHANGE  WORKSPACE  MEMBERSHIP      ENVIRONMENT  GROUP TYPE    GROUP ID  ROLE ENTRIES                         ENTITLEMENTS
                -       team       admin -> none   *            ORGANIZATION  *         com.example.teams.plus:ADMIN         -
                -       team       admin -> none   *            ORGANIZATION  *         com.example.teams.pro:ADMIN          -
                -       team       member -> none  *            ORGANIZATION  *         com.example.teams.plus:NONE          -
                -       team       member -> none  *            ORGANIZATION  *         com.example.teams.plus:UNNAMED_ROLE  -
                -       team       member -> none  *            ORGANIZATION  *         com.example.teams.pro:NONE           -
                -       team       member -> none  *            ORGANIZATION  *         com.example.teams.pro:UNNAMED_ROLE   -
                6 workspace membership changes (0 gained, 6 lost, 0 changed role) in minimal scenarios of 45 compared

                """
        )
        let json = try await CLIRunner.run(arguments + ["--json"])
        #expect(json.status == 0)
        let object = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect((object["changes"] as? [Any])?.count == 0)
        #expect(object["verdict"] as? String == "narrows")
        #expect(object["workspaceVerdicts"] as? [String: String] == ["team": "narrows"])
        #expect(object["workspaceScenarios"] as? Int == 45)
        let changes = try #require(object["workspaceChanges"] as? [[String: Any]])
        #expect(
            changes.map { "\($0["oldRole"] ?? "")->\($0["newRole"] ?? "")" } == ["admin->none", "admin->none"]
                + Array(repeating: "member->none", count: 4)
        )
        #expect(
            changes.allSatisfy { $0["workspace"] as? String == "team" && $0["groupType"] as? String == "ORGANIZATION" }
        )
    }
}
