import Foundation
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy
@testable import GroupPolicyTooling

/// `PolicyTestRunner`: the files, results, totals and coverage `group-policy test` prints, for an
/// app's test target to use inside `swift test`.
@Suite struct PolicyTestRunnerTests {
    static let fixtures = repositoryFile("Tests/GroupPolicyCLITests/Fixtures/")

    @Test func theRepositoryPoliciesPassWithFullCoverage() throws {
        let report = try PolicyTestRunner(coverage: true).run(paths: [repositoryFile("Policies")])
        #expect(report.testFileCount == 2)
        #expect(
            report.files.map { $0.path.split(separator: "/").last.map(String.init) } == [
                "family-sharing.tests.json", "team-workspace.tests.json",
            ]
        )
        #expect((report.passed, report.failed) == (19, 0))
        #expect(report.succeeded)
        #expect(
            report.coverage.map { $0.policyPath.split(separator: "/").last.map(String.init) } == [
                "family-sharing.json", "team-workspace.json",
            ]
        )
        #expect(report.coverage.map(\.unexercisedRules.count) == [0, 0])
        #expect(report.coverage.map(\.rules.count) == [3, 5])
    }

    /// A failing case is a result; a test file that does not load is one failed case with its error.
    @Test func aFailingCaseAndAFileThatDoesNotLoad() throws {
        let paths = [Self.fixtures + "failing.tests.json", Self.fixtures + "broken.tests.json"]
        let report = try PolicyTestRunner().run(paths: paths)
        #expect((report.passed, report.failed) == (1, 2))
        #expect(!report.succeeded)
        #expect(report.files.map(\.failed) == [1, 1])
        #expect(report.files[0].error == nil)
        #expect(
            report.files[0].results.filter { !$0.passed }.map(\.failures) == [
                [
                    #"includes: expected 'workspace.manage-seats' to be granted, got ["workspace.members", "workspace.view"]"#
                ]
            ]
        )
        #expect(report.files[1].error?.code == .invalidTestFile)
        #expect(report.files[1].results.isEmpty)
        #expect(report.coverage.isEmpty)
    }

    /// Streamed, each file reaches the closure as it finishes and the report keeps none.
    @Test func streamedFilesAreNotKept() throws {
        var seen: [Int] = []
        let report = try PolicyTestRunner().run(paths: [repositoryFile("Policies")]) { seen.append($0.results.count) }
        #expect(seen.reduce(0, +) == 19)
        #expect(seen.count == 2)
        #expect(report.files.isEmpty)
        #expect((report.passed, report.failed) == (19, 0))
    }

    /// Finding no test file is not a success: a mistyped path must not pass.
    @Test func noTestFileDoesNotSucceed() throws {
        // A directory holding a policy and no test file.
        let directory = try makeTemporaryDirectory("no-tests")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(FileManager.default.createFile(atPath: directory + "/p.json", contents: Data("{}".utf8)))
        let report = try PolicyTestRunner().run(paths: [directory])
        #expect(report.testFileCount == 0)
        #expect(!report.succeeded)
        #expect(throws: GroupPolicyError.self) { try PolicyTestRunner().run(paths: ["no/such/dir"]) }
    }
}
