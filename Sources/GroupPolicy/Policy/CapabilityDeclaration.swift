/// A declared capability.
struct CapabilityDeclaration: Sendable, Equatable {
    var name: String
    var description: String?
    var kind: CapabilityKind
    var offset: Int
    /// Where the declaration's key starts, for tools that point at it (the tooling's warnings).
    var location: SourcePosition?
}
