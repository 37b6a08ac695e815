import GroupPolicy
import GroupPolicyTooling
import Testing

/// The app's policy tests, run as `group-policy test` runs them, from the app's own test target.
@Suite("Policy tests")
struct PolicyFileTests {
    @Test("every case of every policy test file beside the policies passes, and every rule is exercised")
    func policyTestsPass() throws {
        let report = try PolicyTestRunner(coverage: true).run(paths: [PolicyFiles.directory])
        #expect(report.files.map(\.path) == [PolicyFiles.directory + "/team.tests.json"])
        for file in report.files {
            #expect(file.error == nil, "\(file.path) does not load: \(file.error.map { "\($0)" } ?? "")")
            for result in file.results where !result.passed {
                Issue.record("\(result.name): \(result.failures.joined(separator: "; "))")
            }
        }
        #expect(
            report.files.first?.results.map(\.name) == [
                "an admin of the Pro team views and manages seats", "a seat holder views only",
                "a family group sees nothing of the team workspace",
            ]
        )
        #expect(report.passed == 3)
        #expect(report.failed == 0)
        #expect(report.succeeded)
        #expect(report.coverage.map(\.policyPath) == [PolicyFiles.directory + "/team.json"])
        for coverage in report.coverage {
            #expect(coverage.unexercisedRules.map(\.id) == [], "rules no case exercises")
            #expect(coverage.unexercisedWorkspaces.map(\.id) == [], "workspaces no case exercises")
        }
    }
}
