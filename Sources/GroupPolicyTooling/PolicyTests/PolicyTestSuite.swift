public import GroupPolicy
import GroupPolicyBasics

/// A loaded policy test file (`*.tests.json`): the policy it tests and its cases, ready to run.
///
/// The format is the DocC article "Policy test file format". Run it from the CLI (`group-policy
/// test`) or inside `swift test`:
///
/// ```swift
/// @Test func teamWorkspaceRules() throws {
///     let suite = try PolicyTestSuite(contentsOfFile: "Policies/team-workspace.tests.json")
///     for result in suite.run() {
///         #expect(result.passed, "\(result.name): \(result.failures)")
///     }
/// }
/// ```
public struct PolicyTestSuite: Sendable {
    static let format = "group-policy-tests/v1"

    /// The test file's path as given, or `nil` for bytes from memory.
    public let path: String?
    /// The tested policy's path, resolved against the test file's directory.
    public let policyPath: String
    /// The tested policy.
    public let policy: Policy
    /// The cases, in file order.
    public let cases: [PolicyTestCase]
    /// How many distinct `responseFile`s loading read, each once however many cases share it.
    let responseFilesRead: Int

    /// Loads a test file and the policy it names.
    ///
    /// - Parameters:
    ///   - path: The test file's path; relative paths inside it resolve against its directory.
    ///   - limits: Bounds on the sizes of the files read.
    ///   - allowsResponseFilesOutside: Whether a `responseFile` may lie outside the test file's
    ///     project (it must be a regular file all the same; see the DocC article "Policy test file
    ///     format", section "Response files").
    /// - Throws: A `GroupPolicyError` with code `invalidTestFile` listing every diagnostic when the
    ///   file, its policy or a `responseFile` has an error (a `responseFile` refused by the rule
    ///   too); `unreadableFile` when it cannot be read.
    public init(
        contentsOfFile path: String,
        limits: PolicyLimits = .default,
        allowsResponseFilesOutside: Bool = false
    ) throws(GroupPolicyError) {
        let bytes = try readFile(path, limits: limits)
        try self.init(
            jsonBytes: bytes,
            fileName: path,
            limits: limits,
            allowsResponseFilesOutside: allowsResponseFilesOutside
        )
    }

    /// Loads a test file for a command that reads many: the file and its policy come through
    /// `loader`, which bounds what the command reads, keeps the policy consecutive test files name,
    /// and reads an author's unsaved edit of either in place of the file.
    init(contentsOfFile path: String, loader: PolicyLoader) throws(GroupPolicyError) {
        let source = SourceText(fileName: path, bytes: try loader.read(path))
        try self.init(source: source, parsed: PolicyTestParser.parse(source, limits: .default, loader: loader))
    }

    /// Loads a test file from bytes; relative paths in it resolve against `fileName`'s directory
    /// (or the current directory without one), which is also where its project is looked for.
    ///
    /// - Parameters:
    ///   - jsonBytes: The test file's bytes.
    ///   - fileName: The test file's path, for messages and relative paths.
    ///   - limits: Bounds on the sizes of the files read.
    ///   - allowsResponseFilesOutside: Whether a `responseFile` may lie outside the test file's
    ///     project.
    /// - Throws: As ``init(contentsOfFile:limits:allowsResponseFilesOutside:)``.
    public init(
        jsonBytes: some Collection<UInt8>,
        fileName: String? = nil,
        limits: PolicyLimits = .default,
        allowsResponseFilesOutside: Bool = false
    ) throws(GroupPolicyError) {
        let source = SourceText(fileName: fileName, bytes: Array(jsonBytes))
        let access = ResponseFileAccess(allowsOutside: allowsResponseFilesOutside)
        try self.init(source: source, parsed: PolicyTestParser.parse(source, limits: limits, access: access))
    }

    private init(
        source: SourceText,
        parsed: (suite: PolicyTestParser.Parsed?, diagnostics: [Diagnostic])
    ) throws(GroupPolicyError) {
        let fileName = source.fileName
        guard let parsed = parsed.suite else {
            let first = parsed.diagnostics.first { $0.severity == .error }
            throw GroupPolicyError(
                code: .invalidTestFile,
                message: first?.message ?? "the test file does not load",
                location: first?.location,
                jsonPath: first?.jsonPath,
                diagnostics: parsed.diagnostics
            )
        }
        self.path = fileName
        self.policyPath = parsed.policyPath
        self.policy = parsed.policy
        self.cases = parsed.cases
        self.responseFilesRead = parsed.responseFilesRead
    }

    /// Runs every case.
    ///
    /// Cases that share a response (every case naming one `responseFile` holds the same decoded
    /// response) and a context are evaluated once and share the decision, and what their
    /// expectations read of it (its capabilities, groups and grants, indexed once), so time and
    /// memory grow with the distinct responses and with the expectations, not with cases times
    /// decisions.
    public func run() -> [PolicyTestResult] {
        struct Shared: Hashable {
            var storage: UnsafeRawPointer?
            var count: Int
            var context: EvaluationContext
        }
        var decisions: [Shared: (facts: DecisionFacts, ordinal: Int)] = [:]
        return cases.map { testCase in
            let groups = testCase.response.groups
            let key = Shared(
                storage: groups.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) },
                count: groups.count,
                context: testCase.context
            )
            // The cases keep every response alive during the run, so a storage address cannot be
            // reused by another response; equal storage means an equal response.
            let shared: (facts: DecisionFacts, ordinal: Int)
            if let known = decisions[key] {
                shared = known
            } else {
                shared = (DecisionFacts(policy.evaluate(testCase.response, in: testCase.context)), decisions.count)
                decisions[key] = shared
            }
            return PolicyTestResult(
                name: testCase.name,
                location: testCase.location,
                failures: testCase.expectation.failures(against: shared.facts),
                decision: shared.facts.decision,
                sharedDecision: shared.ordinal
            )
        }
    }

    /// Runs one case.
    public func run(_ testCase: PolicyTestCase) -> PolicyTestResult {
        let decision = policy.evaluate(testCase.response, in: testCase.context)
        return PolicyTestResult(
            name: testCase.name,
            location: testCase.location,
            failures: testCase.expectation.failures(for: decision),
            decision: decision
        )
    }
}
