public import GroupPolicy
import GroupPolicyBasics

/// A policy directory as its author is editing it: the files on disk, some of them replaced by
/// edited bytes that are not saved yet.
///
/// The files an author edits are the directory's policy files and the test files beside them
/// (``testFiles``: those in the directory itself, not in its subfolders).
///
/// Every answer comes from the code the `group-policy` commands run, with the edited bytes read
/// in place of the files' own: ``policy()`` loads the directory's policy set as `eval --policy DIR`
/// does, ``check(invariantBudget:)`` is `check DIR`, ``runTests()`` is `test --coverage DIR` (the
/// test files load the edited policies they name). Nothing is written; the playground of the
/// DocC article "Authoring in the playground" saves a file only when its edit checks clean.
public struct PolicyWorkbench: Sendable {
    /// The directory, as given.
    public let directory: String
    /// The files of the directory's policy set (its `*.json` files that are not test files or
    /// schemas), as paths starting with ``directory``, sorted by name.
    public let policyFiles: [String]
    /// The policy test files (`*.tests.json`) in the directory itself, sorted by name.
    ///
    /// Paths starting with ``directory``. Test files in its subfolders run too, but are not edited.
    public let testFiles: [String]
    /// The edited bytes, by the real path of the file they replace.
    private let edits: [String: [UInt8]]
    /// Whether a test case's `responseFile` may lie outside its test file's project
    /// (`group-policy playground --allow-outside`).
    public let allowsResponseFilesOutside: Bool

    /// Opens a policy directory with edits of some of its policy files.
    ///
    /// - Parameters:
    ///   - directory: The directory holding the policy set.
    ///   - edits: Edited bytes by file name: the last path component of one of ``policyFiles``
    ///     or ``testFiles``.
    ///   - allowsResponseFilesOutside: Whether a test case's `responseFile` may lie outside its
    ///     test file's project (see the DocC article "Policy test file format").
    /// - Throws: A `GroupPolicyError` with code `unreadableFile` when the directory cannot be
    ///   listed or holds no policy file, or when an edit names a file that is not one of its
    ///   policy or test files.
    public init(
        directory: String,
        edits: [String: [UInt8]] = [:],
        allowsResponseFilesOutside: Bool = false
    ) throws(GroupPolicyError) {
        self.allowsResponseFilesOutside = allowsResponseFilesOutside
        guard isDirectory(directory) else {
            throw GroupPolicyError(code: .unreadableFile, message: "\(directory) is not a directory")
        }
        self.directory = directory
        policyFiles = try PolicyFiles.policyFiles(at: directory)
        testFiles = try PolicyFiles.testFiles(under: [directory]).filter { path in
            path == (directory.hasSuffix("/") ? directory : directory + "/") + Self.fileName(of: path)
        }
        var byRealPath: [String: [UInt8]] = [:]
        for (name, bytes) in edits {
            guard let path = (policyFiles + testFiles).first(where: { Self.fileName(of: $0) == name }) else {
                throw GroupPolicyError(
                    code: .unreadableFile,
                    message: "'\(name)' is not a policy or test file of \(directory)".escapingControlCharacters
                )
            }
            byRealPath[realPath(path) ?? path] = bytes
        }
        self.edits = byRealPath
    }

    /// The last path component of a path: the name an edit gives a file by.
    public static func fileName(of path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? path
    }

    /// A loader for one answer: the edits in place of the files, the response file rule.
    func loader() -> PolicyLoader {
        PolicyLoader(edits: edits, responseFileAccess: ResponseFileAccess(allowsOutside: allowsResponseFilesOutside))
    }

    /// The edited policy set, loaded as `Policy(contentsOf:)` loads the directory on disk.
    ///
    /// - Throws: The `GroupPolicyError` loading throws: `invalidPolicy` with every diagnostic,
    ///   `unreadableFile` or `limitExceeded`.
    public func policy() throws(GroupPolicyError) -> Policy {
        let loader = PolicyLoader(edits: edits)
        return try Policy(contentsOf: directory, limits: .default) { path throws(GroupPolicyError) in
            try loader.read(path)
        }
    }

    /// The policy set as saved on disk, without the edits.
    ///
    /// - Throws: As ``policy()``.
    public func savedPolicy() throws(GroupPolicyError) -> Policy {
        try Policy(contentsOfDirectory: directory)
    }

    /// Checks the directory with the edits, as `group-policy check DIR` checks the files on disk:
    /// each policy on its own with its invariants, and every test file under the directory; then
    /// the conflicts between the set's files (which loading the set reports, and `check`, loading
    /// each file on its own, does not), each an error of the file it points into.
    ///
    /// - Parameter invariantBudget: The most scenarios one invariant may need.
    /// - Returns: The report, one entry per file found.
    /// - Throws: As ``PolicyCheck/run(paths:)``.
    public func check(
        invariantBudget: Int = Policy.defaultInvariantBudget
    ) throws(GroupPolicyError) -> PolicyCheckReport {
        var report = try PolicyCheck(invariantBudget: invariantBudget)
            .run(paths: [directory], loader: loader())
        do {
            _ = try policy()
        } catch {
            for diagnostic in error.diagnostics where diagnostic.kind == .conflictInSet {
                guard let index = report.files.firstIndex(where: { $0.path == diagnostic.location?.file }) else {
                    continue
                }
                report.files[index].diagnostics.append(diagnostic)
                report.summary.errors += 1
            }
        }
        return report
    }

    /// Runs every policy test file under the directory against the edited policies, with coverage,
    /// as `group-policy test --coverage DIR` runs them against the files on disk.
    ///
    /// A failed case also says why its decision holds or lacks each capability its failures name
    /// (``PolicyTestResult`` `explanations` in the report's JSON), as `explain` would: at most
    /// ``maximumExplanationsPerCase`` of them.
    ///
    /// - Returns: Every file's results, the totals and each tested policy's coverage.
    /// - Throws: As ``PolicyTestRunner/run(paths:)``.
    public func runTests() throws(GroupPolicyError) -> PolicyTestReport {
        var files: [PolicyTestReport.File] = []
        var report = try PolicyTestRunner(coverage: true).run(paths: [directory], loader: loader()) { file, suite in
            var file = file
            if let suite { Self.explainFailures(of: &file, suite: suite) }
            files.append(file)
        }
        report.files = files
        return report
    }
}

extension PolicyWorkbench {
    /// The most explanations a failed case carries: an answer stays small however many
    /// capabilities a failed expectation lists.
    public static let maximumExplanationsPerCase = 3

    /// Explains, for each failed case of a file, the capabilities its failures name.
    static func explainFailures(of file: inout PolicyTestReport.File, suite: PolicyTestSuite) {
        for index in file.results.indices where !file.results[index].passed && index < suite.cases.count {
            let testCase = suite.cases[index]
            let decision = file.results[index].decision
            var explanations: [String] = []
            for (capability, group) in failedCapabilities(of: testCase.expectation, in: decision)
            where explanations.count < maximumExplanationsPerCase {
                do throws(GroupPolicyError) {
                    let explanation = try suite.policy.explain(
                        Capability(capability),
                        for: testCase.response,
                        in: testCase.context,
                        group: group
                    )
                    explanations.append(explanation.text)
                } catch {
                    explanations.append("\(capability): \(error.message)")
                }
            }
            file.results[index].explanations = explanations
        }
    }

    /// The capabilities (and the group, for a group's expectation) where `decision` falls short of
    /// `expectation`, in the order the failures list them.
    static func failedCapabilities(
        of expectation: PolicyTestExpectation,
        in decision: Decision
    ) -> [(capability: String, group: String?)] {
        var found: [(capability: String, group: String?)] = []
        func differences(expected: [String], actual: [String], group: String?) {
            // Compared by their bytes, as the engine compares names.
            let wanted = Set(expected.map(ExactName.init))
            let have = Set(actual.map(ExactName.init))
            for name in expected.map(ExactName.init).sorted() where !have.contains(name) {
                found.append((name.string, group))
            }
            for name in actual.map(ExactName.init).sorted() where !wanted.contains(name) {
                found.append((name.string, group))
            }
        }
        if let capabilities = expectation.capabilities {
            differences(expected: capabilities, actual: decision.capabilities.names, group: nil)
        }
        for name in expectation.includes where !decision.allows(Capability(name)) { found.append((name, nil)) }
        for name in expectation.excludes where decision.allows(Capability(name)) { found.append((name, nil)) }
        for (groupID, capabilities) in expectation.groups {
            guard let actual = decision.capabilities(inGroup: groupID) else { continue }
            differences(expected: capabilities, actual: actual.names, group: groupID)
        }
        return found
    }
}
