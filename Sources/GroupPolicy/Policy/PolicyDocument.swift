/// One policy file as validated: the v1 format's content, with where each part came from.
///
/// Immutable once parsed; compilation turns it into the indexed form evaluation reads.
package struct PolicyDocument: Sendable {
    var fileName: String?
    package var id: String
    /// Where the `id` value starts (set conflicts point at it).
    var idOffset: Int = 0
    var description: String?
    var capabilities: [CapabilityDeclaration]
    package var rules: [RuleDefinition]
    package var workspaces: [WorkspaceDefinition]
    /// Sandbox product id -> the product id the rules use.
    package var productAliases: [String: String]
    package var invariants: [InvariantDefinition]
    /// Warnings found while loading (the document loaded, so it has no errors).
    var warnings: [Diagnostic]
}
