/// A set of capabilities of one policy: a bit set over the policy's interned names that iterates
/// its names in sorted (byte-wise) order.
///
/// Membership tests cost a name lookup and a bit test; sets from policies with up to 64
/// capabilities need no heap storage at all.
public struct CapabilitySet: Sendable, Sequence, CustomStringConvertible {
    let catalog: CapabilityCatalog
    let bits: CapabilityBits

    init(catalog: CapabilityCatalog, bits: CapabilityBits) {
        self.catalog = catalog
        self.bits = bits
    }

    /// Whether the set holds the capability named `name`, without walking the names (public callers
    /// name a ``Capability``, which a string literal also is).
    func contains(_ name: String) -> Bool {
        guard let index = catalog.index(of: name) else { return false }
        return bits.contains(index)
    }

    /// Whether the set holds `capability`.
    public func contains(_ capability: Capability) -> Bool { contains(capability.name) }

    /// The number of capabilities in the set.
    public var count: Int { bits.count }

    /// Whether the set is empty.
    public var isEmpty: Bool { bits.isEmpty }

    /// The names, sorted.
    public var names: [String] { bits.indices.map { catalog.names[$0] } }

    /// Iterates the names in sorted order.
    public func makeIterator() -> IndexingIterator<[String]> { names.makeIterator() }

    /// The names as a JSON-like list.
    public var description: String { "[" + names.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
}

extension CapabilitySet: Equatable, Hashable {
    /// Two sets are equal when they hold the same names (even when from different policies).
    public static func == (lhs: CapabilitySet, rhs: CapabilitySet) -> Bool {
        if lhs.catalog === rhs.catalog { return lhs.bits == rhs.bits }
        return lhs.names == rhs.names
    }

    /// Hashes the names.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(names)
    }
}
