import GroupPolicyBasics

/// The one error type of the `GroupPolicy` module: what went wrong (``code``), where, and why.
///
/// Loading a policy or test file that has errors throws one `GroupPolicyError` carrying every
/// diagnostic found (``diagnostics``), so a tool can print them all; nothing is half-loaded.
public struct GroupPolicyError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    ///
    /// New codes may be added; switch with a `default`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case invalidResponse = "invalid-response"
            case invalidPolicy = "invalid-policy"
            case invalidTestFile = "invalid-test-file"
            case unreadableFile = "unreadable-file"
            case limitExceeded = "limit-exceeded"
            case undeclaredCapability = "undeclared-capability"
            case unknownGroup = "unknown-group"
            case overBudget = "over-budget"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A Get Customer Groups or Get Group Members document that is not valid JSON or does not
        /// have Apple's shape (a missing `groupId`, a wrong JSON type).
        public static let invalidResponse = Code(.invalidResponse)
        /// A policy file (or set) that does not load; ``GroupPolicyError/diagnostics`` says why.
        public static let invalidPolicy = Code(.invalidPolicy)
        /// A policy test file that does not load; ``GroupPolicyError/diagnostics`` says why.
        public static let invalidTestFile = Code(.invalidTestFile)
        /// A file or directory that cannot be read.
        public static let unreadableFile = Code(.unreadableFile)
        /// Input over a configured size limit.
        public static let limitExceeded = Code(.limitExceeded)
        /// A capability the policy does not declare, asked about by name (the message suggests the
        /// closest declared one).
        public static let undeclaredCapability = Code(.undeclaredCapability)
        /// A group id that is not in the response it was asked about.
        public static let unknownGroup = Code(.unknownGroup)
        /// A scenario space larger than the budget the caller set.
        ///
        /// A larger budget (a diff's `budget`) lets the call run; fixed limits are
        /// ``limitExceeded``.
        public static let overBudget = Code(.overBudget)

        /// The code's identifier, such as `invalid-policy`.
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What is wrong, for people.
    public var message: String
    /// Where the problem is, when it is in a file or document.
    public var location: SourcePosition?
    /// The JSON path of the offending value, when there is one.
    public var jsonPath: String?
    /// Every diagnostic found while loading (errors first in file order, then warnings); empty for
    /// failures that are not about a policy or test file's content.
    public var diagnostics: [Diagnostic]
    /// The parameter of the call that, given, brings the request within its limits.
    ///
    /// `group` when explaining every group of a response is over the explanation's limits (the
    /// message says "explain one group"); `nil` when no parameter does. A tool that takes it as an
    /// option of its own can name that option.
    public var narrowingParameter: String?
    /// Whether a document's bytes are not JSON at all, as opposed to JSON of the wrong shape; the
    /// fetcher words the two differently.
    package var isSyntaxError = false

    /// Creates an error.
    public init(
        code: Code,
        message: String,
        location: SourcePosition? = nil,
        jsonPath: String? = nil,
        diagnostics: [Diagnostic] = []
    ) {
        self.code = code
        self.message = message
        self.location = location
        self.jsonPath = jsonPath
        self.diagnostics = diagnostics
    }

    /// One line per finding: `file:line:col: json.path: message`, or each diagnostic's line.
    ///
    /// Control characters in any part are escaped as JSON escapes them, so each finding stays on
    /// its line.
    public var description: String {
        let errors = diagnostics.filter { $0.severity == .error }
        if !errors.isEmpty {
            return errors.map(\.description).joined(separator: "\n")
        }
        var text = ""
        if let location { text += "\(location): " }
        if let jsonPath { text += "\(jsonPath): " }
        return (text + message).escapingControlCharacters
    }
}
