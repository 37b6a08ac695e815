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
///
/// A diff can hand it hundreds of thousands of rows, each visited by every pass, so rows are
/// merged as numbers: each name is numbered once (by its bytes), and the passes group, hash and
/// copy small records of numbers; the rows are rebuilt from them at the end.
struct PolicyDiffMerger {
    let space: ScenarioSpace

    /// Any value of a dimension (a number no name gets).
    private static let any: Int32 = -1

    /// A row as numbers: each name's number, ``any`` for any value.
    ///
    /// `origin` is the row it comes from (whose subject, entitlements and example it keeps); the
    /// other fields are its key.
    private struct Compact {
        var environment: Int32
        var groupType: Int32
        var groupID: Int32
        var entryCount: Int32
        var entries: (product: Int32, role: Int32, secondProduct: Int32, secondRole: Int32)
        var entitlements: Int32
        var origin: Int

        func product(_ position: Int) -> Int32 { position == 0 ? entries.product : entries.secondProduct }
        func role(_ position: Int) -> Int32 { position == 0 ? entries.role : entries.secondRole }

        /// The coordinates without the origin: rows equal but for one dimension have one key once
        /// that dimension is set to any value.
        var key: Key {
            Key(
                environment: environment,
                groupType: groupType,
                groupID: groupID,
                entryCount: entryCount,
                product: entries.product,
                role: entries.role,
                secondProduct: entries.secondProduct,
                secondRole: entries.secondRole,
                entitlements: entitlements
            )
        }
    }

    private struct Key: Hashable {
        var environment: Int32
        var groupType: Int32
        var groupID: Int32
        var entryCount: Int32
        var product: Int32
        var role: Int32
        var secondProduct: Int32
        var secondRole: Int32
        var entitlements: Int32
    }

    /// Names by number and numbers by name (bytes), for one merge.
    private struct Numbering {
        var names: [String] = []
        var numbers: [ExactName: Int32] = [:]
        var entitlementSets: [[String]] = []
        var entitlementNumbers: [[ExactName]: Int32] = [:]

        mutating func number(_ name: String?) -> Int32 {
            guard let name else { return PolicyDiffMerger.any }
            let exact = ExactName(name)
            if let known = numbers[exact] { return known }
            names.append(name)
            numbers[exact] = Int32(names.count - 1)
            return Int32(names.count - 1)
        }

        mutating func number(entitlements: [String]) -> Int32 {
            let exact = entitlements.map(ExactName.init)
            if let known = entitlementNumbers[exact] { return known }
            entitlementSets.append(entitlements)
            entitlementNumbers[exact] = Int32(entitlementSets.count - 1)
            return Int32(entitlementSets.count - 1)
        }

        func name(_ number: Int32) -> String? { number == PolicyDiffMerger.any ? nil : names[Int(number)] }
    }

    /// Merges rows of one subject (what changes), and sorts them.
    func merge<Row: ScenarioClassRow>(_ rows: [Row]) -> [Row] {
        var numbering = Numbering()
        let environments = StoreEnvironment.allCases
        var merged = rows.enumerated().map { origin, row in
            let roles = row.roles
            return Compact(
                environment: row.environment.flatMap { environments.firstIndex(of: $0) }.map(Int32.init) ?? Self.any,
                groupType: numbering.number(row.groupType),
                groupID: numbering.number(row.groupID),
                entryCount: Int32(roles.count),
                entries: (
                    numbering.number(roles.first?.productID), numbering.number(roles.first?.role),
                    roles.count > 1 ? numbering.number(roles[1].productID) : Self.any,
                    roles.count > 1 ? numbering.number(roles[1].role) : Self.any
                ),
                entitlements: numbering.number(entitlements: row.entitlements),
                origin: origin
            )
        }
        // The domains, as numbers: per environment its group ids, the group types (all, and all
        // but CONSUMER for groups with role entries), the roles, and the two environments.
        let groupIDs = environments.map { environment in
            Set(space.groupIDs(in: environment).map { numbering.number($0) })
        }
        let allTypes = Set(space.groupTypes.map { numbering.number($0) })
        let typesWithEntries = Set(
            space.groupTypes.filter { $0 != GroupType.consumer.rawValue }.map { numbering.number($0) }
        )
        let roles = Set(space.roles.map { numbering.number($0) })
        var products = ProductDomains(space: space)

        // A row has at most two entries; merge each position until nothing changes.
        for product in [false, true] {
            var changed = true
            while changed {
                changed = false
                for position in 0..<2 {
                    let next = mergeEntries(merged, position: position, product: product) { environment, others in
                        product ? products.domain(environment, others, &numbering) : roles
                    }
                    if next.count != merged.count { changed = true }
                    merged = next
                }
            }
        }
        merged = Self.mergeGroups(merged, \.groupID) { row in
            row.environment == Self.any ? nil : groupIDs[Int(row.environment)]
        }
        merged = Self.mergeGroups(merged, \.groupType) { row in row.entryCount == 0 ? allTypes : typesWithEntries }
        let everyEnvironment = Set(environments.indices.map(Int32.init))
        merged = Self.mergeGroups(merged, \.environment) { _ in everyEnvironment }

        return Self.sorted(
            merged.map { compact in
                var row = rows[compact.origin]
                row.environment = compact.environment == Self.any ? nil : environments[Int(compact.environment)]
                row.groupType = numbering.name(compact.groupType)
                row.groupID = numbering.name(compact.groupID)
                row.roles = (0..<Int(compact.entryCount)).map { position in
                    PolicyDiff.EntryPattern(
                        productID: numbering.name(compact.product(position)),
                        role: numbering.name(compact.role(position))
                    )
                }
                return row
            }
        )
    }

    /// Merges rows equal but for one dimension when their values cover its whole domain.
    private static func mergeGroups(
        _ rows: [Compact],
        _ dimension: WritableKeyPath<Compact, Int32>,
        domain: (Compact) -> Set<Int32>?
    ) -> [Compact] {
        var groups: [Key: [Compact]] = [:]
        var order: [Key] = []
        for row in rows {
            var anyValue = row
            anyValue[keyPath: dimension] = any
            let key = anyValue.key
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(row)
        }
        var result: [Compact] = []
        for key in order {
            let members = groups[key] ?? []
            // Rows whose value is already any are left as they are.
            if members.allSatisfy({ $0[keyPath: dimension] != any }), let first = members.first,
                let domain = domain(first), Set(members.map { $0[keyPath: dimension] }).isSuperset(of: domain)
            {
                var mergedRow = first
                mergedRow[keyPath: dimension] = any
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
    /// order and another product can sort before or after the other entry. `domain` gives the
    /// values to cover, from a row's environment and the products of its other entries.
    private func mergeEntries(
        _ rows: [Compact],
        position: Int,
        product: Bool,
        domain: (_ environment: Int32, _ others: [Int32]) -> Set<Int32>
    ) -> [Compact] {
        var groups: [Key: [(row: Compact, value: Int32)]] = [:]
        var order: [(key: Key, anyValue: Compact)] = []
        var result: [Compact] = []
        for row in rows {
            guard position < row.entryCount else {
                result.append(row)
                continue
            }
            let productID = row.product(position)
            let value = product ? productID : row.role(position)
            let other = position == 0 ? row.entries.secondProduct : row.entries.product
            // An entry is named by its product; one whose product is already any cannot be varied,
            // nor can a product be varied beside an entry of any product (its slot is unknown).
            guard productID != Self.any, value != Self.any, !product || row.entryCount < 2 || other != Self.any
            else {
                result.append(row)
                continue
            }
            var anyValue = row
            if product {
                // The other entry first, then this one with any product.
                let role = row.role(position)
                let otherRole = position == 0 ? row.entries.secondRole : row.entries.role
                anyValue.entries =
                    row.entryCount < 2
                    ? (Self.any, role, Self.any, Self.any) : (other, otherRole, Self.any, role)
            } else if position == 0 {
                anyValue.entries.role = Self.any
            } else {
                anyValue.entries.secondRole = Self.any
            }
            let key = anyValue.key
            if groups[key] == nil { order.append((key, anyValue)) }
            groups[key, default: []].append((row, value))
        }
        for (key, anyValue) in order {
            let members = groups[key] ?? []
            guard let first = members.first?.row else { continue }
            if product && first.environment == Self.any {
                result += members.map(\.row)
                continue
            }
            let others = (0..<Int(anyValue.entryCount)).map { anyValue.product($0) }.filter { $0 != Self.any }
            if Set(members.map(\.value)).isSuperset(of: domain(first.environment, others)) {
                var mergedRow = first
                mergedRow.entries = anyValue.entries
                result.append(mergedRow)
            } else {
                result += members.map(\.row)
            }
        }
        return result
    }

    /// The products an entry can name beside others, per environment: every product of the
    /// environment except in the other entries' slots, computed once per such pair.
    private struct ProductDomains {
        let space: ScenarioSpace
        private var known: [[Int32]: Set<Int32>] = [:]

        init(space: ScenarioSpace) {
            self.space = space
        }

        mutating func domain(_ environment: Int32, _ others: [Int32], _ numbering: inout Numbering) -> Set<Int32> {
            let key = [environment] + others.sorted()
            if let domain = known[key] { return domain }
            let candidates = space.candidates(in: StoreEnvironment.allCases[Int(environment)])
            let numbers = candidates.map { numbering.number($0.entry.productID) }
            let otherSlots = Set(candidates.indices.filter { others.contains(numbers[$0]) }.map { candidates[$0].slot })
            let domain = Set(
                candidates.indices.filter { !otherSlots.contains(candidates[$0].slot) }.map { numbers[$0] }
            )
            known[key] = domain
            return domain
        }
    }

    /// Rows in order (see ``sortKey(_:)``), each row's sort key built once.
    static func sorted<Row: ScenarioClassRow>(_ rows: [Row]) -> [Row] {
        rows.map { (key: sortKey($0), row: $0) }.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.row)
    }

    /// The order of rows: subject, then the scenario's coordinates (any value first), each name
    /// by its bytes.
    private static func sortKey(_ row: some ScenarioClassRow) -> [ExactName] {
        func text(_ value: String?) -> String { value.map { "1" + $0 } ?? "0" }
        let coordinates =
            [text(row.environment?.rawValue), text(row.groupType), text(row.groupID), String(row.roles.count)]
            + row.roles.flatMap { [text($0.productID), text($0.role)] } + [String(row.entitlements.count)]
            + row.entitlements
        return (row.subject + coordinates).map(ExactName.init)
    }
}
