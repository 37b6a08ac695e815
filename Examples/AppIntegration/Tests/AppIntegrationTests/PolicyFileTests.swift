import Foundation
import GroupPolicy
import GroupPolicyTooling
import Testing

/// The app's policy tests, run as `group-policy test` runs them, from the app's own test target.
@Suite("Policy tests")
struct PolicyFileTests {
    @Test("every case of Policies/team.tests.json passes")
    func policyTestsPass() throws {
        let suite = try PolicyTestSuite(contentsOfFile: PolicyFiles.directory + "/team.tests.json")
        let results = suite.run()
        #expect(
            results.map(\.name) == [
                "an admin of the Pro team views and manages seats", "a seat holder views only",
                "a family group sees nothing of the team workspace",
            ]
        )
        for result in results {
            #expect(result.passed, "\(result.name): \(result.failures)")
        }
    }
}
