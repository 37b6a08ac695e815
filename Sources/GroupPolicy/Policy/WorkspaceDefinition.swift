package import GroupPolicyBasics

/// One workspace definition.
package struct WorkspaceDefinition: Sendable {
    package var id: String
    var description: String?
    /// Never holds `roles` (rejected at load).
    package var match: MatchCondition
    package var adminRoles: [String]
    package var requires: Requirements
    var offset: Int
    package var path: JSONPath
    /// Where the `id` value starts (set conflicts point at it).
    var idOffset: Int
    /// Where the workspace starts, for tools that point at it (coverage).
    package var location: SourcePosition?
}
