package import GroupPolicyBasics

/// One invariant: a property checked over every scenario (see the DocC article "Policy file
/// format", section "Invariants").
package struct InvariantDefinition: Sendable {
    package enum Quantifier: String, Sendable {
        case never
        case always
    }

    package var id: String
    var description: String?
    package var quantifier: Quantifier
    package var capabilities: [String]
    package var match: MatchCondition
    package var requires: Requirements
    var offset: Int
    package var path: JSONPath
    /// Where the invariant starts: a violation is reported there.
    package var location: SourcePosition?
}
