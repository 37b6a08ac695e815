import GroupPolicy
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicyTooling

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The check's report: which files it found, what each holds, and the counts the CLI prints.
@Suite struct PolicyCheckTests {
    static let fixtures = repositoryFile("Tests/GroupPolicyCLITests/Fixtures/")

    /// The shipped policies: two policies, two test files, nine invariants that hold.
    @Test func theShippedPoliciesCheckClean() throws {
        let report = try PolicyCheck(strict: true).run(paths: [repositoryFile("Policies")])
        var expected = PolicyCheckReport.Summary()
        expected.policies = 2
        expected.testFiles = 2
        expected.invariants = 9
        expected.invariantsHolding = 9
        #expect(report.summary == expected)
        #expect(
            report.files.map { "\($0.kind) \($0.path.dropFirst(packageRoot.count + 1))" } == [
                "policy Policies/family-sharing.json", "policy Policies/team-workspace.json",
                "testFile Policies/family-sharing.tests.json", "testFile Policies/team-workspace.tests.json",
            ]
        )
        #expect(report.files.allSatisfy { $0.diagnostics.isEmpty && $0.error == nil })
    }

    /// A truncated policy (one error), an unused capability (one warning) and a violated invariant
    /// (one error; the other invariant holds).
    @Test func brokenPoliciesAreCountedFileByFile() throws {
        let report = try PolicyCheck().run(paths: [Self.fixtures + "check"])
        var expected = PolicyCheckReport.Summary()
        expected.policies = 3
        expected.errors = 2
        expected.warnings = 1
        expected.invariants = 2
        expected.invariantsHolding = 1
        #expect(report.summary == expected)
        let byName = Dictionary(
            uniqueKeysWithValues: report.files.map { ($0.path.split(separator: "/").last ?? "", $0) }
        )
        #expect(byName["truncated.json"]?.diagnostics.map(\.message) == ["invalid JSON: unterminated string"])
        #expect(byName["unused-capability.json"]?.diagnostics.map(\.severity) == [.warning])
        #expect(byName["violated-invariant.json"]?.invariants.map(\.status) == [.holds, .violated])
    }

    /// Strict: the warning counts as an error, and the report's diagnostic says so.
    @Test func aStrictCheckMakesWarningsErrors() throws {
        let report = try PolicyCheck(strict: true).run(paths: [Self.fixtures + "check/unused-capability.json"])
        #expect(report.summary.errors == 1)
        #expect(report.summary.warnings == 0)
        #expect(report.files.first?.diagnostics.map(\.severity) == [.error])
    }

    /// A test file that names an undeclared capability: one error, from the test file.
    @Test func aBrokenTestFileIsOneError() throws {
        let report = try PolicyCheck().run(paths: [Self.fixtures + "broken.tests.json"])
        #expect(report.summary.testFiles == 1)
        #expect(report.summary.policies == 0)
        #expect(report.summary.errors == 1)
        #expect(
            report.files.first?.diagnostics.map(\.message) == [
                "the policy declares no capability 'workspace.veiw' (did you mean 'workspace.view'?)"
            ]
        )
    }

    /// A path that holds nothing to check is an error; one that does not exist cannot be searched.
    @Test func nothingToCheckIsAnErrorAndAMissingPathThrows() throws {
        let empty = try makeTemporaryDirectory("policy-check-empty")
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let report = try PolicyCheck().run(paths: [empty])
        #expect(report.files.isEmpty)
        #expect(report.summary.errors == 1)
        #expect(throws: GroupPolicyError.self) { try PolicyCheck().run(paths: [empty + "/missing"]) }
    }
}
