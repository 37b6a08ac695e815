public import GroupPolicy

/// What a ``PolicyTestRunner`` found: each test file's results, the totals, and each tested
/// policy's coverage.
public struct PolicyTestReport: Sendable {
    /// One test file's outcome.
    public struct File: Sendable {
        /// The test file's path as found.
        public var path: String
        /// Why the file did not load, or `nil` when it ran.
        ///
        /// Its diagnostics say where; the file counts as one failed case.
        public var error: GroupPolicyError?
        /// Each case's result, in file order (empty when the file did not load).
        public var results: [PolicyTestResult]

        /// Creates a file's outcome.
        public init(path: String, error: GroupPolicyError? = nil, results: [PolicyTestResult] = []) {
            self.path = path
            self.error = error
            self.results = results
        }

        /// The cases that passed.
        public var passed: Int { results.count { $0.passed } }

        /// The cases that failed; 1 for a file that does not load.
        public var failed: Int { error == nil ? results.count { !$0.passed } : 1 }
    }

    /// Every test file, in search order (empty when the files were handed to
    /// ``PolicyTestRunner/run(paths:forEachFile:)``).
    public var files: [File] = []
    /// How many test files were found.
    public var testFileCount: Int
    /// Cases that passed, over every file.
    public var passed = 0
    /// Cases that failed, over every file (a test file that does not load counts as one).
    public var failed = 0
    /// Per tested policy, in order of first appearance, across the test files that test it; empty
    /// unless the runner measures coverage.
    public var coverage: [PolicyCoverage] = []

    /// Creates an empty report.
    ///
    /// - Parameter testFileCount: How many test files were found.
    public init(testFileCount: Int) {
        self.testFileCount = testFileCount
    }

    /// Whether every case passed and there was a test file at all (finding none is a failure, so
    /// that a mistyped path cannot pass).
    public var succeeded: Bool { failed == 0 && testFileCount > 0 }
}
