/// A declared capability.
struct CapabilityDeclaration: Sendable, Equatable {
    var name: String
    var description: String?
    var kind: CapabilityKind
    var offset: Int
}
