import Foundation
import Testing

@Suite struct CheckCommandTests {
    static let fixtures = "Tests/GroupPolicyCLITests/Fixtures/check/"

    @Test(arguments: [["check", "Policies"], ["check", "--strict", "Policies"]])
    func theBundledPoliciesAndTestsAreClean(_ arguments: [String]) async throws {
        let output = try await CLIRunner.run(arguments)
        #expect(output.status == 0)
        #expect(output.stderr == "")
        #expect(
            output.stdout
                == "checked 2 policies, 2 test files: 0 errors, 0 warnings, 9 invariants hold\npolicy revision ec499e3986364ea5\n"
        )
    }

    @Test func verboseListsEachInvariantThatHoldsWithItsScenarios() async throws {
        let output = try await CLIRunner.run(["check", "--verbose", "Policies/family-sharing.json"])
        #expect(output.status == 0)
        // The policy names no product or group id, and only group-level rules: each invariant
        // needs one entry-less scenario per covered (group type, environment, group id) (one id
        // in Production, two in Sandbox with the placeholder) and entitlement set: ORGANIZATION
        // with and without the premium entitlement (6); CONSUMER (3); every type in Sandbox (6);
        // CONSUMER in Production (1).
        #expect(
            output.stdout == """
                Policies/family-sharing.json:38:5: invariants[0]: invariant 'organizations-never-see-family' holds (6 scenarios checked)
                Policies/family-sharing.json:45:5: invariants[1]: invariant 'consumer-members-always-share' holds (3 scenarios checked)
                Policies/family-sharing.json:49:5: invariants[2]: invariant 'no-badge-in-sandbox' holds (6 scenarios checked)
                Policies/family-sharing.json:54:5: invariants[3]: invariant 'family-badge-in-production' holds (1 scenario checked)
                checked 1 policy, 0 test files: 0 errors, 0 warnings, 4 invariants hold
                policy revision 49c9b1f4e538bd3a

                """
        )
    }

    @Test func aTypoedCapabilityIsReportedWithItsLineAndASuggestion() async throws {
        let output = try await CLIRunner.run(["check", "Tests/GroupPolicyCLITests/Fixtures/typo-policy.json"])
        #expect(output.status == 1)
        // Line 5, column 44 is the opening quote of "workspace.mange".
        #expect(
            output.stderr
                == "Tests/GroupPolicyCLITests/Fixtures/typo-policy.json:5:44: error: rules[0].capabilities[0]: undeclared capability 'workspace.mange' (did you mean 'workspace.manage'?)\n"
        )
        #expect(output.stdout == "checked 1 policy, 0 test files: 1 error, 0 warnings, 0 invariants hold\n")
    }

    @Test func aTruncatedFileFailsCleanlyWithALocation() async throws {
        let output = try await CLIRunner.run(["check", Self.fixtures + "truncated.json"])
        #expect(output.status == 1)
        // The file ends inside the string "pro-admins-manage", which opens at line 25, column 13.
        #expect(
            output.stderr == Self.fixtures
                + "truncated.json:25:13: error: rules[1].id: invalid JSON: unterminated string\n"
        )
        #expect(output.stdout == "checked 1 policy, 0 test files: 1 error, 0 warnings, 0 invariants hold\n")
    }

    @Test func warningsPassUnlessStrict() async throws {
        let file = Self.fixtures + "unused-capability.json"
        let warning =
            ":4:47: capabilities[\"workspace.export\"]: capability 'workspace.export' is declared but no rule grants it\n"
        let lenient = try await CLIRunner.run(["check", file])
        #expect(lenient.status == 0)
        #expect(lenient.stderr == file + warning.replacingOccurrences(of: ":4:47: ", with: ":4:47: warning: "))
        #expect(
            lenient.stdout
                == "checked 1 policy, 0 test files: 0 errors, 1 warning, 0 invariants hold\npolicy revision 46434da983ee6e22\n"
        )
        let strict = try await CLIRunner.run(["check", "--strict", file])
        #expect(strict.status == 1)
        #expect(strict.stderr == file + warning.replacingOccurrences(of: ":4:47: ", with: ":4:47: error: "))
        #expect(strict.stdout == "checked 1 policy, 0 test files: 1 error, 0 warnings, 0 invariants hold\n")
    }

    @Test func aViolatedInvariantPrintsACounterexampleThatReallyFails() async throws {
        let file = Self.fixtures + "violated-invariant.json"
        let output = try await CLIRunner.run(["check", file])
        #expect(output.status == 1)
        #expect(output.stdout == "checked 1 policy, 0 test files: 1 error, 0 warnings, 1 of 2 invariants hold\n")
        let lines = output.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // The invariant's object starts at line 11, column 5.
        #expect(
            lines.first
                == file
                + ":11:5: error: invariants[1]: invariant 'seat-holders-never-manage' does not hold: 'workspace.manage-seats' is granted in Production, ORGANIZATION group 'unnamed-group', roles [com.example.pro: NONE], entitlements []"
        )
        #expect(lines.dropFirst().first == "  counterexample, as a test case that fails until the policy is fixed:")
        let testCase = lines.dropFirst(2).filter { $0.hasPrefix("    ") }.joined(separator: "\n")

        // Pasted into a test file, the case fails, because the policy really breaks the invariant.
        let directory = FileManager.default.temporaryDirectory.path + "/check-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let policyPath = CLIRunner.packageRoot + "/" + file
        let testFile = #"{ "format": "group-policy-tests/v1", "policy": "\#(policyPath)", "cases": [ \#(testCase) ] }"#
        #expect(FileManager.default.createFile(atPath: directory + "/c.tests.json", contents: Data(testFile.utf8)))
        let run = try await CLIRunner.run(["test", directory])
        #expect(run.status == 1)
        #expect(
            run.stdout.contains(
                "excludes: expected 'workspace.manage-seats' not to be granted, but it is (granted by 'everyone-manages' in group unnamed-group)"
            )
        )
        #expect(run.stdout.hasSuffix("0 passed, 1 failed\n"))
    }

    @Test func anInvariantOverTheBudgetFails() async throws {
        let output = try await CLIRunner.run(["check", "--invariant-budget", "6", "Policies/team-workspace.json"])
        #expect(output.status == 1)
        #expect(
            output.stderr == """
                Policies/team-workspace.json:90:5: error: invariants[3]: invariant 'no-export-in-sandbox' was not checked: its scenario space holds 10 scenarios, over the budget of 6
                  raise --invariant-budget, or narrow the invariant's match or requires
                Policies/team-workspace.json: note: its rules were not analysed for redundancy: its reduced space holds more than 6 scenarios, over the budget of 6

                """
        )
        #expect(output.stdout == "checked 1 policy, 0 test files: 1 error, 0 warnings, 4 of 5 invariants hold\n")
    }

    @Test(arguments: [
        (
            ["check"],
            """
            Error: give at least one PATH (a policy, a test file or a directory)
            Usage: group-policy check <path> ... [options]
              See 'group-policy check --help' for more information.

            """
        ),
        (["check", "missing-dir"], "Error: cannot read missing-dir: no such file or directory\n"),
        (
            ["check", "--invariant-budget", "0", "Policies"],
            """
            Error: --invariant-budget needs a positive number of scenarios, not '0'
            Usage: group-policy check <path> ... [options]
              See 'group-policy check --help' for more information.

            """
        ),
    ])
    func badUsageExitsTwo(_ arguments: [String], _ expected: String) async throws {
        let output = try await CLIRunner.run(arguments)
        #expect(output.status == 2)
        #expect(output.stdout == "")
        #expect(output.stderr == expected)
    }

    /// Each file is broken in one way the editor schema rejects too (see .ci/validate-schemas.py).
    @Test(arguments: [
        "bad-environment.json", "empty-expect.tests.json", "empty-rule-capabilities.json",
        "invariant-never-and-always.json", "role-in-workspace-match.json", "unknown-case-key.tests.json",
        "unknown-key.json", "unknown-workspace-role.tests.json", "wrong-format.json",
    ])
    func theLoaderRejectsWhatTheSchemaRejects(_ name: String) async throws {
        let output = try await CLIRunner.run(["check", "Tests/GroupPolicyCLITests/Fixtures/schema/" + name])
        #expect(output.status == 1)
        #expect(output.stderr.contains(": error: "))
    }

    @Test func checkHasHelp() async throws {
        let output = try await CLIRunner.run(["check", "--help"])
        #expect(output.status == 0)
        #expect(output.stdout.contains("\nUsage: group-policy check <path> ... [options]\n"))
    }
}
