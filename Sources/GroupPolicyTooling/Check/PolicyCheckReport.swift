public import GroupPolicy

/// What a ``PolicyCheck`` found: each file with its diagnostics and invariant results, and counts.
public struct PolicyCheckReport: Sendable {
    /// One checked file.
    public struct File: Sendable {
        /// What the file was checked as.
        public enum Kind: Sendable, Hashable {
            /// A policy file, loaded on its own, with its invariants checked.
            case policy
            /// A policy test file, loaded with the policy it names (its cases are not run).
            case testFile
        }

        /// The file's path as found.
        public var path: String
        /// What the file was checked as.
        public var kind: Kind
        /// The error that stopped the file from loading when it carries no diagnostics (an
        /// unreadable file, for one).
        public var error: GroupPolicyError?
        /// The file's load errors, or its warnings if it loaded; every one an error in a strict check.
        public var diagnostics: [Diagnostic] = []
        /// The policy's invariant results, in policy order (empty for a test file or a policy that
        /// does not load).
        public var invariants: [InvariantResult] = []
        /// Why the policy's rules were not analysed for redundancy, or `nil`.
        ///
        /// ``RuleAnalysis/skipped``: its space over the invariant budget or its work over the work
        /// limit; `nil` when they were, or for a test file or a policy that does not load. Not a
        /// finding: it counts nothing.
        public var ruleAnalysisSkipped: String?

        /// Creates an entry with no findings.
        public init(path: String, kind: Kind) {
            self.path = path
            self.kind = kind
        }
    }

    /// The counts of a check.
    public struct Summary: Sendable, Hashable {
        /// Policy files checked.
        public var policies = 0
        /// Test files checked.
        public var testFiles = 0
        /// Errors: load errors, violated invariants and invariants over the budget, errors without
        /// diagnostics, warnings in a strict check, and one when no file was found.
        public var errors = 0
        /// Warnings (none in a strict check).
        public var warnings = 0
        /// Invariants checked.
        public var invariants = 0
        /// Invariants that hold.
        public var invariantsHolding = 0
        /// Whether a file could not be read.
        public var unreadable = false

        /// Creates empty counts.
        public init() {}
    }

    /// Every file checked: policies first, then test files, each in search order.
    public var files: [File]
    /// The counts over every file.
    public var summary: Summary
    /// The revision a server loading the checked policy files as one set reports in its decisions
    /// (`Policy.revision`); `nil` when there is an error or no policy file.
    public var policyRevision: String?

    /// Creates a report.
    public init(files: [File], summary: Summary) {
        self.files = files
        self.summary = summary
    }
}
