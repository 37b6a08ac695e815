import GroupPolicy

/// A row of a diff: what changes, and the class of scenarios in which it changes.
protocol ScenarioClassRow {
    /// What changes, as names: rows with different subjects never merge, and rows sort by it first
    /// (by bytes).
    var subject: [String] { get }
    var environment: StoreEnvironment? { get set }
    var groupType: String? { get set }
    var groupID: String? { get set }
    var roles: [PolicyDiff.EntryPattern] { get set }
    var entitlements: [String] { get }
    /// One concrete scenario of the class.
    var example: Scenario { get }
}

/// Shortens a diff: rows that differ only in one dimension, and cover every value of it, become one
/// row with that dimension as any value (`nil`).
///
/// Dimensions are merged innermost first (an entry's role, an entry's product, the group id, the
/// group type, the environment), because the values a dimension can take depend on the outer ones
/// (the group ids of `Sandbox` include Apple's placeholder; a group with role entries is never a
/// `CONSUMER` group). Rows of different subjects (capability and change, or workspace and
/// membership change) never merge. Values are compared by their bytes, as the engine compares
/// them: two spellings of a name are two values, and both must be present to cover a domain.
struct PolicyDiffMerger {
    let space: ScenarioSpace

    private enum Dimension: CaseIterable {
        case role, product, groupID, groupType, environment
    }

    /// A row's coordinates by their bytes, without its example: rows equal but for one dimension
    /// have one key once that dimension is set to any value.
    private struct Key: Hashable {
        var subject: [ExactName]
        var environment: StoreEnvironment?
        var groupType: ExactName?
        var groupID: ExactName?
        var roles: [ExactName?]
        var entitlements: [ExactName]

        init(_ row: some ScenarioClassRow) {
            subject = row.subject.map(ExactName.init)
            environment = row.environment
            groupType = row.groupType.map(ExactName.init)
            groupID = row.groupID.map(ExactName.init)
            roles = row.roles.flatMap { [$0.productID.map(ExactName.init), $0.role.map(ExactName.init)] }
            entitlements = row.entitlements.map(ExactName.init)
        }
    }

    func merge<Row: ScenarioClassRow>(_ rows: [Row]) -> [Row] {
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
                    domain: { row in row.environment.map { Set(space.groupIDs(in: $0).map(ExactName.init)) } }
                )
            case .groupType:
                // A group with role entries is never CONSUMER, so those rows need every other type.
                merged = mergeGroups(
                    merged,
                    value: { $0.groupType },
                    set: { $0.groupType = nil },
                    domain: { row in
                        Set(
                            space.groupTypes.filter { row.roles.isEmpty || $0 != GroupType.consumer.rawValue }
                                .map(ExactName.init)
                        )
                    }
                )
            case .environment:
                merged = mergeGroups(
                    merged,
                    value: { $0.environment?.rawValue },
                    set: { $0.environment = nil },
                    domain: { _ in Set(StoreEnvironment.allCases.map { ExactName($0.rawValue) }) }
                )
            }
        }
        return merged.sorted(by: Self.precedes)
    }

    /// Merges rows equal but for one dimension when their values cover its whole domain.
    private func mergeGroups<Row: ScenarioClassRow>(
        _ rows: [Row],
        value: (Row) -> String?,
        set: (inout Row) -> Void,
        domain: (Row) -> Set<ExactName>?
    ) -> [Row] {
        var groups: [Key: [Row]] = [:]
        var order: [Key] = []
        for row in rows {
            var anyValue = row
            set(&anyValue)
            let key = Key(anyValue)
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(row)
        }
        var result: [Row] = []
        for key in order {
            let members = groups[key] ?? []
            let values = Set(members.compactMap(value).map(ExactName.init))
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

    /// What a merged entry's product domain depends on.
    private struct ProductDomainKey: Hashable {
        var environment: StoreEnvironment
        var others: Set<ExactName>
    }

    /// Merges the role (or product) of the entry at `position` of rows whose other coordinates are
    /// the same.
    ///
    /// For products, the varied entry moves last in the key, since entries are listed in product
    /// order and another product can sort before or after the other entry.
    private func mergeEntries<Row: ScenarioClassRow>(_ rows: [Row], position: Int, product: Bool) -> [Row] {
        var groups: [Key: [(row: Row, value: ExactName)]] = [:]
        var order: [(key: Key, roles: [PolicyDiff.EntryPattern])] = []
        var result: [Row] = []
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
            var anyValue = row
            if product {
                anyValue.roles = rest + [.init(productID: nil, role: entry.role)]
            } else {
                anyValue.roles[position].role = nil
            }
            let key = Key(anyValue)
            if groups[key] == nil { order.append((key, anyValue.roles)) }
            groups[key, default: []].append((row, ExactName(value)))
        }
        let roleDomain = Set(space.roles.map(ExactName.init))
        // The product domain of a key depends only on its environment and its other entries'
        // products: computed once per such pair, not once per key.
        var productDomains: [ProductDomainKey: Set<ExactName>] = [:]
        for (key, roles) in order {
            let members = groups[key] ?? []
            guard let first = members.first?.row else { continue }
            var domain = roleDomain
            if product {
                guard let environment = first.environment else {
                    result += members.map(\.row)
                    continue
                }
                let others = Set(roles.compactMap(\.productID).map(ExactName.init))
                let domainKey = ProductDomainKey(environment: environment, others: others)
                if let known = productDomains[domainKey] {
                    domain = known
                } else {
                    // Every product of the environment, except in the other entry's slot.
                    let candidates = space.candidates(in: environment)
                    let otherSlots = Set(
                        candidates.filter { others.contains(ExactName($0.entry.productID)) }.map(\.slot)
                    )
                    domain = Set(
                        candidates.filter { !otherSlots.contains($0.slot) }.map { ExactName($0.entry.productID) }
                    )
                    productDomains[domainKey] = domain
                }
            }
            if Set(members.map(\.value)).isSuperset(of: domain) {
                var mergedRow = first
                mergedRow.roles = roles
                result.append(mergedRow)
            } else {
                result += members.map(\.row)
            }
        }
        return result
    }

    /// Subject, then the scenario's coordinates (any value first), each name by its bytes.
    static func precedes(_ lhs: some ScenarioClassRow, _ rhs: some ScenarioClassRow) -> Bool {
        let left = sortKey(lhs)
        let right = sortKey(rhs)
        return left.lexicographicallyPrecedes(right)
    }

    private static func sortKey(_ row: some ScenarioClassRow) -> [ExactName] {
        func text(_ value: String?) -> String { value.map { "1" + $0 } ?? "0" }
        let coordinates =
            [text(row.environment?.rawValue), text(row.groupType), text(row.groupID), String(row.roles.count)]
            + row.roles.flatMap { [text($0.productID), text($0.role)] } + [String(row.entitlements.count)]
            + row.entitlements
        return (row.subject + coordinates).map(ExactName.init)
    }
}
