public import GroupPolicy

/// Checks a set of paths the way `group-policy check` does: every policy under them loads on its
/// own and its invariants hold, and every policy test file loads.
///
/// A file is taken as given; a directory is searched recursively. Policies are the `*.json` files
/// that are not `*.tests.json` or `*.schema.json`; test files are the `*.tests.json` files (a test
/// file loads the policy it names). The check returns a report and prints nothing, so the CLI, the
/// code generator and the plugin can share it and format it as they need.
public struct PolicyCheck: Sendable {
    /// The most scenarios one invariant's reduced space may hold (see
    /// `Policy.checkInvariants(budget:)`).
    public var invariantBudget: Int
    /// Whether warnings count as errors: every diagnostic the report holds is then an error.
    public var strict: Bool
    /// Whether a test case's `responseFile` may lie outside its test file's project (it must be a
    /// regular file all the same): `group-policy check --allow-outside`.
    public var allowsResponseFilesOutside: Bool

    /// Creates a check.
    ///
    /// - Parameters:
    ///   - invariantBudget: The most scenarios one invariant may need.
    ///   - strict: Whether warnings count as errors.
    ///   - allowsResponseFilesOutside: Whether a `responseFile` may lie outside its test file's
    ///     project.
    public init(
        invariantBudget: Int = Policy.defaultInvariantBudget,
        strict: Bool = false,
        allowsResponseFilesOutside: Bool = false
    ) {
        self.invariantBudget = invariantBudget
        self.strict = strict
        self.allowsResponseFilesOutside = allowsResponseFilesOutside
    }

    /// Finds the policies and test files under `paths`, loads each and checks every invariant.
    ///
    /// - Parameter paths: Files and directories.
    /// - Returns: One entry per file found, policies first, then test files, each in search order.
    /// - Throws: A `GroupPolicyError` with code `unreadableFile` when a path cannot be searched,
    ///   or `limitExceeded`, before anything is read, when the files found hold more than a check
    ///   reads (32 MiB together); a file that does not load is reported in the result instead.
    public func run(paths: [String]) throws(GroupPolicyError) -> PolicyCheckReport {
        try run(
            paths: paths,
            loader: PolicyLoader(responseFileAccess: ResponseFileAccess(allowsOutside: allowsResponseFilesOutside))
        )
    }

    /// ``run(paths:)``, reading the files through `loader` (which may hold edits of some).
    func run(paths: [String], loader: PolicyLoader) throws(GroupPolicyError) -> PolicyCheckReport {
        let (policyFiles, testFiles) = try PolicyFiles.find(under: paths)
        try loader.charge(policyFiles + testFiles)

        var files: [PolicyCheckReport.File] = []
        for path in policyFiles {
            var file = PolicyCheckReport.File(path: path, kind: .policy)
            do {
                let policy = try Policy(jsonBytes: try loader.read(path), fileName: path)
                file.diagnostics = policy.warnings.map(adjusted)
                // One scenario space for the invariants and the rule analysis.
                let space = ScenarioSpace(
                    documents: policy.documents,
                    maximumCandidates: ScenarioSpace.maximumCandidates
                )
                file.invariants = policy.checkInvariants(budget: invariantBudget, space: space)
                // Rules that never matter and capabilities never received: warnings of their own.
                let analysis = policy.analyzeRules(budget: invariantBudget, workLimit: ScenarioWork.limit, space: space)
                file.diagnostics += analysis.warnings.map(adjusted)
                file.ruleAnalysisSkipped = analysis.skipped
            } catch {
                record(error, in: &file)
            }
            files.append(file)
        }
        for path in testFiles {
            var file = PolicyCheckReport.File(path: path, kind: .testFile)
            do {
                _ = try PolicyTestSuite(contentsOfFile: path, loader: loader)
            } catch {
                record(error, in: &file)
            }
            files.append(file)
        }
        var report = PolicyCheckReport(files: files, summary: summary(of: files))
        if report.summary.errors == 0, !report.summary.unreadable, !policyFiles.isEmpty {
            report.policyRevision = try? Policy.revision(ofFiles: policyFiles)
        }
        return report
    }

    /// The diagnostic an invariant result reports, if it does not hold, as this check counts it
    /// (an error when ``strict``).
    public func diagnostic(for result: InvariantResult) -> Diagnostic? {
        result.diagnostic.map(adjusted)
    }

    private func adjusted(_ diagnostic: Diagnostic) -> Diagnostic {
        var diagnostic = diagnostic
        if strict { diagnostic.severity = .error }
        return diagnostic
    }

    private func record(_ error: GroupPolicyError, in file: inout PolicyCheckReport.File) {
        if error.code == .unreadableFile || error.diagnostics.isEmpty {
            file.error = error
        } else {
            file.diagnostics = error.diagnostics.map(adjusted)
        }
    }

    private func summary(of files: [PolicyCheckReport.File]) -> PolicyCheckReport.Summary {
        var summary = PolicyCheckReport.Summary()
        for file in files {
            switch file.kind {
            case .policy: summary.policies += 1
            case .testFile: summary.testFiles += 1
            }
            if let error = file.error {
                // An unreadable file is an error too (and makes the check unusable: exit status 2).
                if error.code == .unreadableFile { summary.unreadable = true }
                summary.errors += 1
            }
            var diagnostics = file.diagnostics
            for result in file.invariants {
                summary.invariants += 1
                if let diagnostic = diagnostic(for: result) {
                    diagnostics.append(diagnostic)
                } else {
                    summary.invariantsHolding += 1
                }
            }
            for diagnostic in diagnostics {
                if diagnostic.severity == .error { summary.errors += 1 } else { summary.warnings += 1 }
            }
        }
        // Checking nothing is an error: a mistyped path must not pass.
        if files.isEmpty { summary.errors += 1 }
        return summary
    }
}
