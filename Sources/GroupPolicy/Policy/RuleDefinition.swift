package import GroupPolicyBasics

/// One rule of a policy.
package struct RuleDefinition: Sendable {
    var id: String
    var description: String?
    package var effect: RuleEffect
    package var capabilities: [String]
    package var match: MatchCondition
    package var requires: Requirements
    var offset: Int
    package var path: JSONPath
    /// Where the rule starts, for tools that point at it (coverage).
    package var location: SourcePosition?
}
