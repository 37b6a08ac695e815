import GroupPolicyBasics

/// One finding about a policy or test file: an error (the file does not load) or a warning (it
/// loads, but something is likely wrong), with where it is and what it is.
///
/// Its description is the compiler-style line tools and editors understand:
/// `Policies/team.json:14:22: error: rules[2].capabilities[0]: undeclared capability 'x'`.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    /// Whether a diagnostic stops a file from loading.
    public enum Severity: String, Sendable, Hashable {
        /// The file does not load.
        case error
        /// The file loads; the finding deserves a look.
        case warning
    }

    /// Error or warning.
    public var severity: Severity
    /// What kind of finding this is, stable across message wording changes.
    public var kind: Kind
    /// Where the offending JSON value starts, when the finding is about a value in a file.
    public var location: SourcePosition?
    /// The JSON path of the offending value, such as `rules[2].capabilities[0]`; `$` is the root.
    public var jsonPath: String
    /// What is wrong, in a sentence fragment without a trailing period.
    public var message: String

    /// Creates a diagnostic.
    public init(severity: Severity, kind: Kind, location: SourcePosition?, jsonPath: String, message: String) {
        self.severity = severity
        self.kind = kind
        self.location = location
        self.jsonPath = jsonPath
        self.message = message
    }

    /// `file:line:col: error|warning: json.path: message`, on one line: control characters in any
    /// part (a file name, a key or a value quoted in the message) are escaped as JSON escapes them.
    public var description: String {
        let place = location.map { "\($0): " } ?? ""
        return "\(place)\(severity.rawValue): \(jsonPath): \(message)".escapingControlCharacters
    }
}

extension Diagnostic {
    /// A stable identifier for each kind of finding (tests and tools match on it, not on text).
    public struct Kind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The kind's identifier, such as `undeclared-capability`.
        public let rawValue: String

        /// Creates a kind from its identifier.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The identifier.
        public var description: String { rawValue }

        /// The bytes are not valid JSON (syntax, encoding, duplicate key, nesting, size).
        public static let invalidJSON = Kind(rawValue: "invalid-json")
        /// A key the format does not define.
        public static let unknownKey = Kind(rawValue: "unknown-key")
        /// A value of the wrong JSON type.
        public static let wrongType = Kind(rawValue: "wrong-type")
        /// A required key is absent.
        public static let missingKey = Kind(rawValue: "missing-key")
        /// A value outside what the format allows (a bad `format`, id or name, an unknown enum value).
        public static let invalidValue = Kind(rawValue: "invalid-value")
        /// Two rules, workspaces, invariants or test cases share an id or name.
        public static let duplicateID = Kind(rawValue: "duplicate-id")
        /// A rule or invariant names a capability the policy does not declare.
        public static let undeclaredCapability = Kind(rawValue: "undeclared-capability")
        /// An array that must hold at least one element is empty.
        public static let emptyArray = Kind(rawValue: "empty-array")
        /// A workspace's match uses `role`.
        public static let roleInWorkspaceMatch = Kind(rawValue: "role-in-workspace-match")
        /// A `content` capability is granted by a rule without `requires.entitlements`.
        public static let contentWithoutEntitlements = Kind(rawValue: "content-without-entitlements")
        /// A referenced file cannot be read or is not of the expected kind.
        public static let unreadableFile = Kind(rawValue: "unreadable-file")
        /// Two policies of one set disagree (a capability's kind, a policy id).
        public static let conflictInSet = Kind(rawValue: "conflict-in-set")
        /// A size limit was exceeded.
        public static let limitExceeded = Kind(rawValue: "limit-exceeded")

        /// A role-level rule restricted to `CONSUMER` groups, which have no role entries.
        public static let unreachableConsumerRule = Kind(rawValue: "unreachable-consumer-rule")
        /// A `groupType` or `role` value this version does not know.
        public static let unknownEnumValue = Kind(rawValue: "unknown-value")
        /// The policy has no rules.
        public static let noRules = Kind(rawValue: "no-rules")
        /// A declared capability that no rule grants.
        public static let capabilityNeverGranted = Kind(rawValue: "capability-never-granted")
        /// A grant rule whose every capability is always removed by a deny rule.
        public static let grantAlwaysDenied = Kind(rawValue: "grant-always-denied")
        /// An invariant does not hold, or could not be checked within its budget.
        public static let invariantViolated = Kind(rawValue: "invariant-violated")
    }
}
