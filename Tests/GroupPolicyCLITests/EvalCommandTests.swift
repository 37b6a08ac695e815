import Foundation
import Testing

@Suite struct EvalCommandTests {
    @Test func printsTheDecisionOfABundledExample() async throws {
        let output = try await CLIRunner.run([
            "eval", "--policy", "Policies/team-workspace.json", "--response", "Examples/seat-holder.json",
        ])
        #expect(output.status == 0)
        #expect(output.stderr == "")
        #expect(
            output.stdout == """
                {
                  "capabilities": [
                    "workspace.members",
                    "workspace.view"
                  ],
                  "groups": [
                    {
                      "groupId": "281474976710656",
                      "groupType": "ORGANIZATION",
                      "capabilities": [
                        "workspace.members",
                        "workspace.view"
                      ]
                    }
                  ],
                  "workspaces": [
                    {
                      "workspace": "team",
                      "groupId": "281474976710656",
                      "role": "member"
                    }
                  ],
                  "notes": []
                }

                """
        )
    }

    @Test func explainEnvironmentAndEntitlementsFromStandardInput() async throws {
        let output = try await CLIRunner.run(
            [
                "eval", "--policy", "Policies/team-workspace.json", "--response", "-", "--environment", "sandbox",
                "--entitlement", "com.example.teams.pro", "--explain",
            ],
            stdin:
                #"{"groups":[{"groupId":"1","groupType":"ORGANIZATION","roles":[{"productId":"example.productId.one","role":"NONE"}]}]}"#
        )
        #expect(output.status == 0)
        let decision = try #require(JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        #expect(decision["capabilities"] as? [String] == ["team.templates", "workspace.members", "workspace.view"])
        let grants = try #require(decision["grants"] as? [[String: String]])
        #expect(
            grants.first == [
                "capability": "team.templates", "groupId": "1", "rule": "pro-templates",
                "productId": "com.example.teams.pro", "sandboxProductId": "example.productId.one", "role": "NONE",
            ]
        )
        #expect(decision["denials"] as? [Any] != nil)
    }

    @Test func aPolicyWithErrorsExitsOneWithItsDiagnostics() async throws {
        let output = try await CLIRunner.run([
            "eval", "--policy", "Tests/GroupPolicyCLITests/Fixtures/typo-policy.json", "--response",
            "Examples/no-groups.json",
        ])
        #expect(output.status == 1)
        #expect(output.stdout == "")
        #expect(
            output.stderr == """
                Tests/GroupPolicyCLITests/Fixtures/typo-policy.json:5:44: error: rules[0].capabilities[0]: undeclared capability 'workspace.mange' (did you mean 'workspace.manage'?)
                Error: policy Tests/GroupPolicyCLITests/Fixtures/typo-policy.json does not load

                """
        )
    }

    @Test(arguments: [
        (
            ["eval", "--policy", "Policies/team-workspace.json"],
            """
            Error: missing required option '--response <file>'
            Usage: group-policy eval --policy <file> --response <file> [options]
              See 'group-policy eval --help' for more information.

            """
        ),
        (
            ["eval", "--policy", "Policies/team-workspace.json", "--response", "nope.json"],
            "Error: cannot read nope.json: no such file\n"
        ),
        (
            ["eval", "--polcy", "x"],
            """
            Error: unknown option '--polcy' (did you mean '--policy'?)
            Usage: group-policy eval --policy <file> --response <file> [options]
              See 'group-policy eval --help' for more information.

            """
        ),
        (
            [
                "eval", "--policy", "Policies/team-workspace.json", "--response", "Examples/no-groups.json",
                "--environment", "staging",
            ],
            """
            Error: unknown environment 'staging' (use production or sandbox)
            Usage: group-policy eval --policy <file> --response <file> [options]
              See 'group-policy eval --help' for more information.

            """
        ),
        (
            ["eval", "--policy", "missing.json", "--response", "Examples/no-groups.json"],
            "Error: cannot read missing.json: no such file\n"
        ),
        (
            ["frobnicate"],
            """
            Error: unknown subcommand 'frobnicate' (one of: eval, explain, test, check, diff, fetch, generate-swift, shadow, playground)
            Usage: group-policy <subcommand>
              See 'group-policy --help' for more information.

            """
        ),
    ])
    func badUsageAndUnreadableInputsExitTwo(_ arguments: [String], _ expected: String) async throws {
        let output = try await CLIRunner.run(arguments)
        #expect(output.status == 2)
        #expect(output.stdout == "")
        #expect(output.stderr == expected)
    }

    @Test func anInvalidResponseExitsTwoNamingThePath() async throws {
        let output = try await CLIRunner.run(
            ["eval", "--policy", "Policies/team-workspace.json", "--response", "-"],
            stdin: #"{"groups":[{"groupType":"CONSUMER"}]}"#
        )
        #expect(output.status == 2)
        #expect(
            output.stderr
                == "Error: invalid response: <stdin>:1:12: groups[0].groupId: missing required key 'groupId'\n"
        )
    }

    @Test(arguments: ["eval", "test", "check", "diff"])
    func everySubcommandHasHelp(_ command: String) async throws {
        let output = try await CLIRunner.run([command, "--help"])
        #expect(output.status == 0)
        #expect(output.stdout.contains("Usage: group-policy \(command) "))
        #expect(output.stdout.contains("--help"))
    }
}

@Suite struct TestCommandTests {
    @Test func theBundledPoliciesPass() async throws {
        let output = try await CLIRunner.run(["test", "Policies"])
        #expect(output.status == 0)
        #expect(output.stdout == "19 passed, 0 failed\n")
    }

    @Test func failuresShowExpectedVersusActualAndTheLastLineCounts() async throws {
        let output = try await CLIRunner.run(["test", "Tests/GroupPolicyCLITests/Fixtures/failing.tests.json"])
        #expect(output.status == 1)
        #expect(
            output.stdout == """
                FAIL Tests/GroupPolicyCLITests/Fixtures/failing.tests.json:10:5: seat holders manage seats (wrong on purpose)
                  includes: expected 'workspace.manage-seats' to be granted, got ["workspace.members", "workspace.view"]
                1 passed, 1 failed

                """
        )
    }

    @Test func aTestFileThatDoesNotLoadCountsAsAFailure() async throws {
        let output = try await CLIRunner.run([
            "test", "Tests/GroupPolicyCLITests/Fixtures/broken.tests.json", "Policies/family-sharing.tests.json",
        ])
        #expect(output.status == 1)
        #expect(output.stdout.hasSuffix("7 passed, 1 failed\n"))
        #expect(
            output.stderr
                == "Tests/GroupPolicyCLITests/Fixtures/broken.tests.json:4:84: error: cases[0].expect.excludes[0]: the policy declares no capability 'workspace.veiw' (did you mean 'workspace.view'?)\n"
        )
    }

    @Test func coverageListsWhatNoCaseExercisedBeforeTheLastLine() async throws {
        let bundled = try await CLIRunner.run(["test", "--coverage", "Policies"])
        #expect(bundled.status == 0)
        #expect(
            bundled.stdout == """
                coverage of Policies/family-sharing.json: 3 of 3 rules, 1 of 1 workspace exercised
                coverage of Policies/team-workspace.json: 5 of 5 rules, 1 of 1 workspace exercised
                19 passed, 0 failed

                """
        )
        // One seat holder's cases exercise only 'seat-holders-view' and the workspace; each other
        // rule's object starts at column 5 of lines 24, 30, 36 and 43.
        let partial = try await CLIRunner.run([
            "test", "--coverage", "Tests/GroupPolicyCLITests/Fixtures/failing.tests.json",
        ])
        #expect(partial.status == 1)
        let policy = "Tests/GroupPolicyCLITests/Fixtures/../../../Policies/team-workspace.json"
        #expect(
            partial.stdout.hasSuffix(
                """
                coverage of \(policy): 1 of 5 rules, 1 of 1 workspace exercised
                  \(policy):24:5: rules[1]: rule 'pro-admins-manage' was not exercised by any case
                  \(policy):30:5: rules[2]: rule 'plus-admins-settings' was not exercised by any case
                  \(policy):36:5: rules[3]: rule 'no-export-in-sandbox' was not exercised by any case
                  \(policy):43:5: rules[4]: rule 'pro-templates' was not exercised by any case
                1 passed, 1 failed

                """
            )
        )
    }

    @Test func aPathWithoutTestsFails() async throws {
        let output = try await CLIRunner.run(["test", "Sources/group-decision-server"])
        #expect(output.status == 1)
        #expect(output.stdout == "0 passed, 0 failed\n")
        #expect(output.stderr == "no test files (*.tests.json) under Sources/group-decision-server\n")
    }
}
