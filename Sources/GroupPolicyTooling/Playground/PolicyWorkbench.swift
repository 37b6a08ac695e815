public import GroupPolicy
import GroupPolicyBasics

/// A policy directory as its author is editing it: the files on disk, some of them replaced by
/// edited bytes that are not saved yet.
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
    /// The edited bytes, by the real path of the file they replace.
    private let edits: [String: [UInt8]]
    /// Whether a test case's `responseFile` may lie outside its test file's project
    /// (`group-policy playground --allow-outside`).
    public let allowsResponseFilesOutside: Bool

    /// Opens a policy directory with edits of some of its policy files.
    ///
    /// - Parameters:
    ///   - directory: The directory holding the policy set.
    ///   - edits: Edited bytes by file name: the last path component of one of ``policyFiles``.
    ///   - allowsResponseFilesOutside: Whether a test case's `responseFile` may lie outside its
    ///     test file's project (see the DocC article "Policy test file format").
    /// - Throws: A `GroupPolicyError` with code `unreadableFile` when the directory cannot be
    ///   listed or holds no policy file, or when an edit names a file that is not one of its
    ///   policy files.
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
        var byRealPath: [String: [UInt8]] = [:]
        for (name, bytes) in edits {
            guard let path = policyFiles.first(where: { Self.fileName(of: $0) == name }) else {
                throw GroupPolicyError(
                    code: .unreadableFile,
                    message: "'\(name)' is not a policy file of \(directory)".escapingControlCharacters
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
    private func loader() -> PolicyLoader {
        PolicyLoader(edits: edits, responseFileAccess: ResponseFileAccess(allowsOutside: allowsResponseFilesOutside))
    }

    /// The edited policy set, loaded as `Policy(contentsOfDirectory:)` loads the files on disk.
    ///
    /// - Throws: The `GroupPolicyError` loading throws: `invalidPolicy` with every diagnostic,
    ///   `unreadableFile` or `limitExceeded`.
    public func policy() throws(GroupPolicyError) -> Policy {
        let loader = PolicyLoader(edits: edits)
        return try Policy(contentsOfDirectory: directory, limits: .default) { path throws(GroupPolicyError) in
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
    /// - Returns: Every file's results, the totals and each tested policy's coverage.
    /// - Throws: As ``PolicyTestRunner/run(paths:)``.
    public func runTests() throws(GroupPolicyError) -> PolicyTestReport {
        var files: [PolicyTestReport.File] = []
        var report = try PolicyTestRunner(coverage: true).run(paths: [directory], loader: loader()) {
            files.append($0)
        }
        report.files = files
        return report
    }
}
