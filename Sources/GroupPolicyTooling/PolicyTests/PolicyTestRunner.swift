public import GroupPolicy

/// Runs every policy test file under a set of paths, the way `group-policy test` does, and
/// returns each file's results, the totals and, when asked, each tested policy's coverage.
///
/// A file is taken as given; a directory is searched recursively for `*.tests.json` files (see
/// the DocC article "Policy test file format"). Each test file loads the policy it names; a file
/// that does not load counts as one failed case. The runner prints nothing.
///
/// In an app's test target, it runs the app's policy tests inside `swift test` (relative paths
/// resolve against the current directory, the package's root under `swift test`):
///
/// ```swift
/// @Test func policyTests() throws {
///     let report = try PolicyTestRunner().run(paths: ["Policies"])
///     for file in report.files {
///         #expect(file.error == nil, "\(file.path): \(file.error.map { "\($0)" } ?? "")")
///         for result in file.results where !result.passed {
///             Issue.record("\(result.name): \(result.failures.joined(separator: "; "))")
///         }
///     }
///     #expect(report.testFileCount > 0)
/// }
/// ```
public struct PolicyTestRunner: Sendable {
    /// Whether the report holds each tested policy's coverage (``PolicyTestReport/coverage``).
    public var measuresCoverage: Bool
    /// Whether a case's `responseFile` may lie outside its test file's project.
    ///
    /// It must be a regular file all the same: see the DocC article "Policy test file format",
    /// section "Response files". `group-policy test --allow-outside`.
    public var allowsResponseFilesOutside: Bool

    /// Creates a runner.
    ///
    /// - Parameters:
    ///   - coverage: Whether to measure which rules and workspaces the cases exercise.
    ///   - allowsResponseFilesOutside: Whether a `responseFile` may lie outside its test file's
    ///     project.
    public init(coverage: Bool = false, allowsResponseFilesOutside: Bool = false) {
        self.measuresCoverage = coverage
        self.allowsResponseFilesOutside = allowsResponseFilesOutside
    }

    /// Runs every test file under `paths` and returns every file's results.
    ///
    /// The report holds every decision of every case; for many large test files, stream the files
    /// with ``run(paths:forEachFile:)`` instead.
    ///
    /// - Parameter paths: Test files and directories.
    /// - Returns: Each file's results in search order, the totals and the coverage.
    /// - Throws: A `GroupPolicyError` with code `unreadableFile` when a path cannot be searched, or
    ///   `limitExceeded`, before any file is read, when the files found hold more than one run reads
    ///   (32 MiB together).
    public func run(paths: [String]) throws(GroupPolicyError) -> PolicyTestReport {
        var files: [PolicyTestReport.File] = []
        var report = try run(paths: paths) { files.append($0) }
        report.files = files
        return report
    }

    /// Runs every test file under `paths`, handing each file's results to `body` as the file
    /// finishes and keeping none of them: memory holds one test file's decisions at a time.
    ///
    /// - Parameters:
    ///   - paths: Test files and directories.
    ///   - body: Called once per test file, in search order.
    /// - Returns: The totals and the coverage; ``PolicyTestReport/files`` is empty.
    /// - Throws: As ``run(paths:)``.
    public func run(
        paths: [String],
        forEachFile body: (PolicyTestReport.File) -> Void
    ) throws(GroupPolicyError) -> PolicyTestReport {
        // Bounds what the whole run reads, and keeps the policy consecutive test files name.
        try run(paths: paths, loader: PolicyLoader(responseFileAccess: responseFileAccess)) { file, _ in body(file) }
    }

    /// Which response files the runner's test files may read.
    var responseFileAccess: ResponseFileAccess {
        ResponseFileAccess(allowsOutside: allowsResponseFilesOutside)
    }

    /// ``run(paths:forEachFile:)``, loading the policies through `loader` (which may hold edits of
    /// some); `body` also gets the suite the file loaded, `nil` when it did not load.
    func run(
        paths: [String],
        loader: PolicyLoader,
        forEachFile body: (PolicyTestReport.File, PolicyTestSuite?) -> Void
    ) throws(GroupPolicyError) -> PolicyTestReport {
        let files = try PolicyFiles.testFiles(under: paths)
        try loader.charge(files)
        var report = PolicyTestReport(testFileCount: files.count)
        for path in files {
            let file: PolicyTestReport.File
            var loaded: PolicyTestSuite?
            do {
                let suite = try PolicyTestSuite(contentsOfFile: path, loader: loader)
                file = PolicyTestReport.File(path: path, results: suite.run())
                if measuresCoverage { PolicyCoverage.merge(file.results, of: suite, into: &report.coverage) }
                loaded = suite
            } catch {
                file = PolicyTestReport.File(path: path, error: error)
            }
            report.passed += file.passed
            report.failed += file.failed
            body(file, loaded)
        }
        return report
    }
}
