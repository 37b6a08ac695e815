import GroupPolicy

/// Shortens a diff: rows that differ only in one dimension, and cover every value of it, become one
/// row with that dimension as any value (`nil`).
///
/// Dimensions are merged innermost first (an entry's role, an entry's product, the group id, the
/// group type, the environment), because the values a dimension can take depend on the outer ones
/// (the group ids of `Sandbox` include Apple's placeholder; a group with role entries is never a
/// `CONSUMER` group). Rows of different capabilities or changes never merge.
struct PolicyDiffMerger {
    let space: ScenarioSpace

    private enum Dimension: CaseIterable {
        case role, product, groupID, groupType, environment
    }

    func merge(_ rows: [PolicyDiff.Row]) -> [PolicyDiff.Row] {
        var merged = rows
        for dimension in Dimension.allCases {
            switch dimension {
            case .role, .product:
                // A row has at most two entries; merge each position until nothing changes.
                var changed = true
                while changed {
                    changed = false
                    for position in 0..<2 {
                        let next = mergeEntries(merged, position: position, product: dimension == .product)
                        if next.count != merged.count { changed = true }
                        merged = next
                    }
                }
            case .groupID:
                merged = mergeGroups(
                    merged,
                    value: { $0.groupID },
                    set: { $0.groupID = nil },
                    domain: { row in row.environment.map { Set(space.groupIDs(in: $0)) } }
                )
            case .groupType:
                // A group with role entries is never CONSUMER, so those rows need every other type.
                merged = mergeGroups(
                    merged,
                    value: { $0.groupType },
                    set: { $0.groupType = nil },
                    domain: { row in
                        Set(space.groupTypes.filter { row.roles.isEmpty || $0 != GroupType.consumer.rawValue })
                    }
                )
            case .environment:
                merged = mergeGroups(
                    merged,
                    value: { $0.environment?.rawValue },
                    set: { $0.environment = nil },
                    domain: { _ in Set(StoreEnvironment.allCases.map(\.rawValue)) }
                )
            }
        }
        return merged.sorted(by: Self.precedes)
    }

    /// Merges rows equal but for one dimension when their values cover its whole domain.
    private func mergeGroups(
        _ rows: [PolicyDiff.Row],
        value: (PolicyDiff.Row) -> String?,
        set: (inout PolicyDiff.Row) -> Void,
        domain: (PolicyDiff.Row) -> Set<String>?
    ) -> [PolicyDiff.Row] {
        var groups: [PolicyDiff.Row: [PolicyDiff.Row]] = [:]
        var order: [PolicyDiff.Row] = []
        for row in rows {
            var key = row
            set(&key)
            key.example = Self.placeholderExample
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(row)
        }
        var result: [PolicyDiff.Row] = []
        for key in order {
            let members = groups[key] ?? []
            let values = Set(members.compactMap(value))
            // Rows whose value is already any are left as they are.
            if members.allSatisfy({ value($0) != nil }), let first = members.first, let domain = domain(first),
                values.isSuperset(of: domain)
            {
                var mergedRow = first
                set(&mergedRow)
                result.append(mergedRow)
            } else {
                result += members
            }
        }
        return result
    }

    /// Merges the role (or product) of the entry at `position` of rows whose other coordinates are
    /// the same.
    ///
    /// For products, the varied entry moves last in the key, since entries are listed in product
    /// order and another product can sort before or after the other entry.
    /// What a merged entry's product domain depends on.
    private struct ProductDomainKey: Hashable {
        var environment: StoreEnvironment
        var others: Set<String>
    }

    private func mergeEntries(_ rows: [PolicyDiff.Row], position: Int, product: Bool) -> [PolicyDiff.Row] {
        var groups: [PolicyDiff.Row: [(row: PolicyDiff.Row, value: String)]] = [:]
        var order: [PolicyDiff.Row] = []
        var result: [PolicyDiff.Row] = []
        for row in rows {
            guard position < row.roles.count else {
                result.append(row)
                continue
            }
            let entry = row.roles[position]
            var rest = row.roles
            rest.remove(at: position)
            // An entry is named by its product; one whose product is already any cannot be varied,
            // nor can a product be varied beside an entry of any product (its slot is unknown).
            guard let productID = entry.productID, let value = product ? productID : entry.role,
                !product || rest.allSatisfy({ $0.productID != nil })
            else {
                result.append(row)
                continue
            }
            var key = row
            key.example = Self.placeholderExample
            if product {
                key.roles = rest + [.init(productID: nil, role: entry.role)]
            } else {
                key.roles[position].role = nil
            }
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append((row, value))
        }
        let roleDomain = Set(space.roles)
        // The product domain of a key depends only on its environment and its other entries'
        // products: computed once per such pair, not once per key (a diff of thousands of rows
        // would otherwise scan every candidate entry for each).
        var productDomains: [ProductDomainKey: Set<String>] = [:]
        for key in order {
            let members = groups[key] ?? []
            guard let first = members.first?.row else { continue }
            var domain = roleDomain
            if product {
                guard let environment = first.environment else {
                    result += members.map(\.row)
                    continue
                }
                let others = Set(key.roles.compactMap(\.productID))
                let domainKey = ProductDomainKey(environment: environment, others: others)
                if let known = productDomains[domainKey] {
                    domain = known
                } else {
                    // Every product of the environment, except in the other entry's slot.
                    let candidates = space.candidates(in: environment)
                    let otherSlots = Set(candidates.filter { others.contains($0.entry.productID) }.map(\.slot))
                    domain = Set(candidates.filter { !otherSlots.contains($0.slot) }.map(\.entry.productID))
                    productDomains[domainKey] = domain
                }
            }
            if Set(members.map(\.value)).isSuperset(of: domain) {
                var mergedRow = first
                mergedRow.roles = key.roles
                result.append(mergedRow)
            } else {
                result += members.map(\.row)
            }
        }
        return result
    }

    /// Stands in for the example while rows are grouped (the example of the first row is kept).
    private static let placeholderExample = Scenario(environment: .production, groupID: "", groupType: "")

    /// Capability, then added before removed, then the scenario's coordinates (any value first).
    static func precedes(_ lhs: PolicyDiff.Row, _ rhs: PolicyDiff.Row) -> Bool {
        if lhs.capability != rhs.capability {
            return lhs.capability.utf8.lexicographicallyPrecedes(rhs.capability.utf8)
        }
        if lhs.change != rhs.change { return lhs.change < rhs.change }
        return sortKey(lhs).lexicographicallyPrecedes(sortKey(rhs))
    }

    private static func sortKey(_ row: PolicyDiff.Row) -> [String] {
        func text(_ value: String?) -> String { value.map { "1" + $0 } ?? "0" }
        return [text(row.environment?.rawValue), text(row.groupType), text(row.groupID), String(row.roles.count)]
            + row.roles.flatMap { [text($0.productID), text($0.role)] } + [String(row.entitlements.count)]
            + row.entitlements
    }
}
