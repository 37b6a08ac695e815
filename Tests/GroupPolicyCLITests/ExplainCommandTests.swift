import Foundation
import Testing

@Suite struct ExplainCommandTests {
    @Test func explainsEveryGroupInTextNearestMissFirst() async throws {
        let output = try await CLIRunner.run([
            "explain", "--policy", "Policies/team-workspace.json", "--response", "Examples/several-groups.json",
            "--capability", "workspace.manage-seats",
        ])
        #expect(output.status == 0)
        #expect(output.stderr == "")
        #expect(
            output.stdout == """
                capability workspace.manage-seats: granted in 1 of 3 groups

                group 281474976710656 (ORGANIZATION): not granted: rule 'pro-admins-manage' needs role ADMIN for com.example.teams.pro; this group has NONE

                group 562949953421312 (CONSUMER): not granted: rule 'pro-admins-manage' needs group type ORGANIZATION; this group is CONSUMER, and needs role ADMIN for com.example.teams.pro; this group has no role entries

                group 844424930131968 (ORGANIZATION): granted by rule 'pro-admins-manage' through com.example.teams.pro ADMIN

                """
        )
    }

    @Test func printsTheJSONOfAPolicySetWithQualifiedRuleNames() async throws {
        let output = try await CLIRunner.run([
            "explain", "--policy", "Policies", "--response", "Examples/seat-holder.json", "--capability",
            "workspace.manage-seats", "--json",
        ])
        #expect(output.status == 0)
        #expect(output.stderr == "")
        #expect(
            output.stdout == """
                {
                  "capability": "workspace.manage-seats",
                  "groups": [
                    {
                      "groupId": "281474976710656",
                      "groupType": "ORGANIZATION",
                      "outcome": "notGranted",
                      "grants": [],
                      "denials": [],
                      "nearMisses": [
                        {
                          "rule": "team-workspace/pro-admins-manage",
                          "unmet": [
                            {
                              "condition": "roleEntry",
                              "productId": [
                                "com.example.teams.pro"
                              ],
                              "role": [
                                "ADMIN"
                              ],
                              "actual": [
                                {
                                  "productId": "com.example.teams.pro",
                                  "role": "NONE"
                                }
                              ]
                            }
                          ]
                        }
                      ]
                    }
                  ]
                }

                """
        )
    }

    @Test func oneGroupWithEnvironmentAndEntitlementsFromStandardInput() async throws {
        let output = try await CLIRunner.run(
            [
                "explain", "--policy", "Policies/team-workspace.json", "--response", "-", "--capability",
                "workspace.export", "--environment", "sandbox", "--entitlement", "com.example.teams.pro", "--group",
                "2", "--json",
            ],
            stdin: """
                {"groups":[{"groupId":"1","groupType":"CONSUMER"},
                  {"groupId":"2","groupType":"ORGANIZATION","roles":[{"productId":"example.productId.one","role":"ADMIN"}]}]}
                """
        )
        #expect(output.status == 0)
        #expect(output.stderr == "")
        let explanation = try #require(JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        let groups = try #require(explanation["groups"] as? [[String: Any]])
        #expect(groups.count == 1)
        #expect(groups.first?["outcome"] as? String == "denied")
        #expect(
            groups.first?["grants"] as? [[String: String]] == [
                [
                    "capability": "workspace.export", "groupId": "2", "rule": "pro-admins-manage",
                    "productId": "com.example.teams.pro", "sandboxProductId": "example.productId.one", "role": "ADMIN",
                ]
            ]
        )
        #expect(
            groups.first?["denials"] as? [[String: String]] == [
                ["capability": "workspace.export", "groupId": "2", "rule": "no-export-in-sandbox"]
            ]
        )
    }

    @Test func anUndeclaredCapabilityExitsOneWithADidYouMean() async throws {
        let output = try await CLIRunner.run([
            "explain", "--policy", "Policies/team-workspace.json", "--response", "Examples/seat-holder.json",
            "--capability", "workspace.manage-seat",
        ])
        #expect(output.status == 1)
        #expect(output.stdout == "")
        #expect(
            output.stderr
                == "Error: undeclared capability 'workspace.manage-seat' (did you mean 'workspace.manage-seats'?)\n"
        )
    }

    @Test(arguments: [
        (
            ["--capability", "workspace.view", "--group", "1"],
            "Error: the response has no group '1'\n"
        ),
        (
            [String](),
            """
            Error: missing required option '--capability <name>'
            Usage: group-policy explain --policy <file> --response <file> --capability <name> [options]
              See 'group-policy explain --help' for more information.

            """
        ),
        (
            ["--capability", "workspace.view", "--environment", "staging"],
            """
            Error: unknown environment 'staging' (use production or sandbox)
            Usage: group-policy explain --policy <file> --response <file> --capability <name> [options]
              See 'group-policy explain --help' for more information.

            """
        ),
    ])
    func badUsageOrInputExitsTwo(_ arguments: [String], _ expected: String) async throws {
        let output = try await CLIRunner.run(
            ["explain", "--policy", "Policies/team-workspace.json", "--response", "Examples/seat-holder.json"]
                + arguments
        )
        #expect(output.status == 2)
        #expect(output.stdout == "")
        #expect(output.stderr == expected)
    }

    /// Over the explanation's limits for every group, the library says "explain one group" and
    /// names its `group` parameter; the CLI names its option for it.
    @Test func overTheLimitNamesTheGroupOption() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/explain-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rules = (0..<2000).map { #"{"id":"r\#($0)","match":{"groupId":"g\#($0)"},"capabilities":["a"]}"# }
        let policy =
            #"{"format":"group-policy/v1","id":"p","capabilities":{"a":"a"},"rules":["#
            + rules.joined(separator: ",") + "]}"
        let groups = (0..<1000).map { #"{"groupId":"x\#($0)","groupType":"ORGANIZATION","roles":[]}"# }
        let response = #"{"groups":["# + groups.joined(separator: ",") + "]}"
        #expect(FileManager.default.createFile(atPath: directory + "/p.json", contents: Data(policy.utf8)))
        #expect(FileManager.default.createFile(atPath: directory + "/r.json", contents: Data(response.utf8)))
        let arguments = [
            "explain", "--policy", directory + "/p.json", "--response", directory + "/r.json", "--capability", "a",
        ]
        let output = try await CLIRunner.run(arguments)
        #expect(output.status == 2)
        #expect(output.stdout == "")
        #expect(
            output.stderr
                == "Error: explaining 'a' would weigh 2000 rules naming it in each of 1000 groups, over the limit of "
                + "1000000 rule-group pairs; explain one group with --group\n"
        )
        let one = try await CLIRunner.run(arguments + ["--group", "x7"])
        #expect(one.status == 0)
        #expect(one.stdout.hasPrefix("capability a: granted in 0 of 1 group"))
    }
}
