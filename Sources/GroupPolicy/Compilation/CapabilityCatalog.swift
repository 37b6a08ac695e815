/// The capabilities of a loaded policy (or set), interned: each name gets an index in sorted name
/// order, so bit sets iterate in the sorted order decisions print.
final class CapabilityCatalog: Sendable {
    let names: [String]
    let kinds: [CapabilityKind]
    let descriptions: [String?]
    let indexByName: [String: Int]
    /// 64-bit words per bit set.
    let wordCount: Int

    init(declarations: [CapabilityDeclaration]) {
        var unique: [String: CapabilityDeclaration] = [:]
        for declaration in declarations where unique[declaration.name] == nil {
            unique[declaration.name] = declaration
        }
        let sorted = unique.values.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        names = sorted.map(\.name)
        kinds = sorted.map(\.kind)
        descriptions = sorted.map(\.description)
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() { index[name] = position }
        indexByName = index
        wordCount = max(1, (names.count + 63) / 64)
    }

    func index(of name: String) -> Int? { indexByName[name] }
}
