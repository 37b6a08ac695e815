import GroupPolicyBasics
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One policy document compiled for evaluation: strings interned to integers, capability sets as
/// deduplicated bit sets, and every rule folded into lookup tables, so a request costs one table
/// lookup per role entry whatever the number of rules.
///
/// Tables are indexed by *layer* (one per distinct `requires`, layer 0 being "no requirement"),
/// group type class, product, and role class. Class 0 of types and roles stands for every value
/// the policy does not name; such values can only match `"*"` or an absent condition.
///
/// The parsed document is not kept: the rules live on in ``rules`` (compact, what evaluation,
/// explanation and provenance read) and the tables; ``document`` rebuilds it for the tools.
final class CompiledDocument: Sendable {
    /// The policy's id.
    let id: String
    let fileName: String?
    let idOffset: Int
    let documentDescription: String?
    let capabilityDeclarations: [CapabilityDeclaration]
    /// The workspace definitions, in definition order.
    let workspaces: [WorkspaceDefinition]
    /// The workspaces compiled for evaluation, in the same order.
    let workspaceMatchers: [WorkspaceMatcher]
    /// Sandbox product id -> the product id the rules use.
    let productAliases: [String: String]
    /// The invariants, in file order.
    let invariants: [InvariantDefinition]
    /// The warnings found while loading, compactly (a large policy can have one per rule).
    private let warningTable: DiagnosticTable
    /// The warnings found while loading.
    var warnings: [Diagnostic] { warningTable.diagnostics }
    /// Every rule, compactly.
    let rules: RuleTable
    /// Whether ``ruleLabels`` qualify rule ids as `policy/rule`.
    private let qualifiesRuleIDs: Bool
    /// The document rebuilt for a tool that asked for it, then kept (tools ask many times).
    private let rebuilt = Mutex<PolicyDocument?>(nil)

    /// How provenance names each rule: its id, qualified as `policy/rule` in a set of several.
    let ruleLabels: [String]
    /// Each rule's capabilities over the set's catalog.
    let ruleBits: RuleBitsTable

    /// The number of rules.
    var ruleCount: Int { rules.count }

    /// The parsed document, rebuilt from the compiled form.
    ///
    /// For the tools (scenario space, invariants, diff, coverage), which read whole rule
    /// definitions. The first call builds it and the document keeps it; evaluation and explanation
    /// never call this, so a policy that only serves requests never holds it.
    var document: PolicyDocument {
        rebuilt.withLock { cached in
            if let cached { return cached }
            let prefix = qualifiesRuleIDs ? id.utf8.count + 1 : 0
            let document = PolicyDocument(
                fileName: fileName,
                id: id,
                idOffset: idOffset,
                description: documentDescription,
                capabilities: capabilityDeclarations,
                rules: (0..<rules.count).map { index in
                    let label = ruleLabels[index]
                    let ruleID = prefix == 0 ? label : String(decoding: label.utf8.dropFirst(prefix), as: UTF8.self)
                    return rules.definition(index, id: ruleID, fileName: fileName)
                },
                workspaces: workspaces,
                productAliases: productAliases,
                invariants: invariants,
                warnings: warnings
            )
            cached = document
            return document
        }
    }

    /// A rule's effect.
    @inline(__always)
    func effect(ofRule rule: Int) -> RuleEffect { rules.effect(rule) }

    /// Whether a rule's `requires` holds in `context`.
    func requirementsHold(ofRule rule: Int, in context: EvaluationContext) -> Bool {
        rules.requires(rule).hold(in: context)
    }

    /// Whether a rule's `groupId` condition (if any) holds for `groupID`.
    func groupIDsMatch(ofRule rule: Int, _ groupID: String) -> Bool {
        rules.matches(rules.condition(.groupID, of: rule), groupID)
    }

    // Interning
    let productionProducts: StringTable
    /// Like `productionProducts`, but sandbox alias sources map to their target's index (or -1).
    let sandboxProducts: StringTable
    let typeNames: [String]
    let roleNames: [String]
    /// Group type -> its class (1-based), and role -> its class; absent names are class 0.
    let typeClasses: StringTable
    let roleClasses: StringTable
    let productCount: Int
    var typeClassCount: Int { typeNames.count + 1 }
    var roleClassCount: Int { roleNames.count + 1 }

    // Layers: which are active depends on the context only.
    let layers: [Requirements]
    /// The layers without entitlements whose environment condition holds, per environment.
    let productionLayers: UInt64
    let sandboxLayers: UInt64
    /// Layers that need entitlements, with their masks (checked per request).
    let entitlementLayers: [(index: Int, requirements: Requirements)]

    // Tables: each cell is an index into `pairWords` (0 = nothing).
    let wordCount: Int
    /// Pair `k`: grant words at `k * 2W`, deny words right after.
    let pairWords: TableStorage<UInt64>
    /// By (layer, type class).
    let groupCells: TableStorage<UInt32>
    /// By (layer, type class, role class).
    let anyProductCells: TableStorage<UInt32>
    /// By (layer, type class, product, role class).
    let productCells: TableStorage<UInt32>
    /// Rules evaluated one by one: those with a `groupId` condition (few, and usually specific),
    /// and those past the 64th distinct `requires`.
    let directRules: [Int]
    /// Each rule's layer (the index of its `requires` in `layers`), or -1 for a direct rule.
    ///
    /// One byte per rule (layers are below 64): a large policy keeps one per rule.
    let ruleLayers: [Int8]
    /// The direct rules a group with a given id can match: those naming the id, in rule order.
    ///
    /// A request or a scenario consults these and ``directRulesForEveryGroup`` only, so work does
    /// not grow with the number of rules naming other groups.
    let directRulesByGroupID: [String: [Int]]
    /// The direct rules without a `groupId` list (past the 64th layer, or `"groupId": "*"`).
    let directRulesForEveryGroup: [Int]
    /// Whether role-level rules are folded into ``anyProductCells`` and ``productCells``.
    ///
    /// When the dense tables would be large (their cells grow as the product of the dimensions a policy
    /// names), they stay empty and such rules are found per entry through ``rulesByProduct`` and
    /// ``anyProductRules`` instead, so compiling costs what the input's size allows.
    let hasDenseRoleTables: Bool

    // Candidate lists for provenance (rules that can match through a given path).
    let groupLevelRules: [Int]
    let anyProductRules: [Int]
    let rulesByProduct: [[Int]]
    /// Each rule's match conditions over interned classes, for the provenance path: the group type
    /// classes, role classes and products it accepts, as ranges of `conditionPool`.
    let ruleConditions: [RuleConditions]
    let conditionPool: [Int32]

    /// The values one condition accepts: `count` values of the pool from `start`, or any value.
    struct ConditionRange {
        var start: Int32
        var count: Int32

        static let any = ConditionRange(start: 0, count: -1)

        /// Whether the condition accepts the interned `value` (class 0 or product -1, a value no
        /// rule names, is accepted only by `any`).
        @inline(__always)
        func accepts(_ value: Int32, in pool: [Int32]) -> Bool {
            guard count >= 0 else { return true }
            var index = Int(start)
            var end = index + Int(count)
            // The values are sorted and distinct: bisect a long list down to a short scan.
            while end - index > 8 {
                let middle = index + (end - index) / 2
                if pool[middle] <= value { index = middle } else { end = middle }
            }
            while index < end {
                if pool[index] == value { return true }
                index += 1
            }
            return false
        }
    }

    /// A rule's `groupType`, `role` and `productId` conditions as interned values.
    struct RuleConditions {
        var types: ConditionRange
        var roles: ConditionRange
        var products: ConditionRange
        /// Whether the match names `productId` or `role` (even as `"*"`): it holds per role entry.
        var isRoleLevel: Bool
        /// Whether the match names `groupId` (checked on the strings: such rules are few).
        var hasGroupIDs: Bool
    }

    init(document: PolicyDocument, catalog: CapabilityCatalog, qualifyRuleIDs: Bool) {
        id = document.id
        fileName = document.fileName
        idOffset = document.idOffset
        documentDescription = document.description
        capabilityDeclarations = document.capabilities
        workspaces = document.workspaces
        workspaceMatchers = document.workspaces.map(WorkspaceMatcher.init)
        productAliases = document.productAliases
        invariants = document.invariants
        warningTable = DiagnosticTable(document.warnings)
        qualifiesRuleIDs = qualifyRuleIDs
        let rules = document.rules
        self.rules = RuleTable(rules: rules, fileName: document.fileName)
        ruleLabels = rules.map { qualifyRuleIDs ? "\(document.id)/\($0.id)" : $0.id }
        wordCount = catalog.wordCount
        ruleBits = RuleBitsTable(wordCount: catalog.wordCount, ruleCount: rules.count) { index in
            rules[index].capabilities.compactMap(catalog.index(of:))
        }

        // Intern the names the rules use, by their bytes: the tables compare bytes, and two
        // spellings `String` calls equal (canonically equivalent) are two names.
        var typeIndex = ExactNameIndex()
        var roleIndex = ExactNameIndex()
        var productIndex = ExactNameIndex()
        for index in rules.indices {
            for type in rules[index].match.groupTypes?.values ?? [] { typeIndex.insert(type) }
            for role in rules[index].match.roles?.values ?? [] { roleIndex.insert(role) }
            for product in rules[index].match.productIDs?.values ?? [] { productIndex.insert(product) }
        }
        let types = typeIndex.names
        let roles = roleIndex.names
        let products = productIndex.names
        typeNames = types
        roleNames = roles
        typeClasses = StringTable(types.enumerated().map { (key: $0.element, value: Int32($0.offset + 1)) })
        roleClasses = StringTable(roles.enumerated().map { (key: $0.element, value: Int32($0.offset + 1)) })
        productCount = products.count
        let productEntries = products.enumerated().map { (key: $0.element, value: Int32($0.offset)) }
        productionProducts = StringTable(productEntries)
        // In the sandbox an alias source *is* its target (the source's own name never reaches a
        // rule), so its entry goes first and shadows a rule naming the source directly.
        let aliasEntries = document.productAliases.sorted { $0.key < $1.key }.map { alias in
            (key: alias.key, value: Int32(productIndex.index(of: alias.value) ?? -1))
        }
        // Without aliases the two tables are one, built once.
        sandboxProducts = aliasEntries.isEmpty ? productionProducts : StringTable(aliasEntries + productEntries)

        // Layers: one per distinct requirement, at most 64 (the rest are evaluated directly).
        var layers: [Requirements] = [.none]
        var ruleLayer: [Int?] = []
        var direct: [Int] = []
        var directByGroupID: [String: [Int]] = [:]
        var directForEveryGroup: [Int] = []
        for index in rules.indices {
            if let groupIDs = rules[index].match.groupIDs {
                direct.append(index)
                ruleLayer.append(nil)
                if case .oneOf(let ids) = groupIDs {
                    for id in Set(ids) { directByGroupID[id, default: []].append(index) }
                } else {
                    directForEveryGroup.append(index)
                }
                continue
            }
            let normalized = Self.normalized(rules[index].requires)
            if let layer = layers.firstIndex(of: normalized) {
                ruleLayer.append(layer)
            } else if layers.count < 64 {
                ruleLayer.append(layers.count)
                layers.append(normalized)
            } else {
                direct.append(index)
                directForEveryGroup.append(index)
                ruleLayer.append(nil)
            }
        }
        directRulesByGroupID = directByGroupID
        directRulesForEveryGroup = directForEveryGroup
        self.layers = layers
        func environmentMask(_ environment: StoreEnvironment) -> UInt64 {
            var mask: UInt64 = 0
            for (index, layer) in layers.enumerated() where layer.entitlements.isEmpty {
                if layer.environments?.contains(environment) ?? true { mask |= 1 << UInt64(index) }
            }
            return mask
        }
        productionLayers = environmentMask(.production)
        sandboxLayers = environmentMask(.sandbox)
        var entitlementLayers: [(Int, Requirements)] = []
        for (index, layer) in layers.enumerated() where !layer.entitlements.isEmpty {
            entitlementLayers.append((index, layer))
        }
        self.entitlementLayers = entitlementLayers
        directRules = direct
        ruleLayers = ruleLayer.map { Int8($0 ?? -1) }

        // Fold the rules into the tables.
        let typeClassTotal = types.count + 1
        let roleClassTotal = roles.count + 1
        let layerCount = layers.count
        let typeLists: [[Int]] = rules.map { rule in
            rule.match.groupTypes.map { condition in
                condition.values.compactMap { typeIndex.index(of: $0).map { $0 + 1 } }
            }
                ?? Array(0..<typeClassTotal)
        }
        let roleLists: [[Int]] = rules.map { rule in
            switch rule.match.roles {
            case nil, .any?: Array(0..<roleClassTotal)
            case .oneOf(let values)?: values.compactMap { roleIndex.index(of: $0).map { $0 + 1 } }
            }
        }
        let dense = Self.denseRoleTablesFit(
            rules: rules,
            ruleLayers: ruleLayer,
            typeLists: typeLists,
            roleLists: roleLists,
            cellCount: saturatingProduct(layerCount, typeClassTotal, roleClassTotal, max(products.count, 1))
        )
        hasDenseRoleTables = dense
        var pool = PairPool(wordCount: catalog.wordCount)
        var groupTable = CellTableBuilder(count: layerCount * typeClassTotal)
        var anyProductTable = CellTableBuilder(count: dense ? layerCount * typeClassTotal * roleClassTotal : 0)
        var productTable = CellTableBuilder(
            count: dense ? layerCount * typeClassTotal * products.count * roleClassTotal : 0
        )
        var groupLevel: [Int] = []
        var anyProduct: [Int] = []
        var byProduct = [[Int]](repeating: [], count: products.count)
        var conditions: [RuleConditions] = []
        conditions.reserveCapacity(rules.count)
        var conditionPool: [Int32] = []
        func range(_ values: [Int]?) -> ConditionRange {
            guard let values else { return .any }
            let start = Int32(conditionPool.count)
            // Sorted and distinct, so that a long list is searched by bisection.
            if values.count == 1 {
                conditionPool.append(Int32(values[0]))
            } else {
                var previous = -1
                for value in values.sorted() where value != previous {
                    conditionPool.append(Int32(value))
                    previous = value
                }
            }
            return ConditionRange(start: start, count: Int32(conditionPool.count) - start)
        }
        for index in rules.indices {
            let bits = ruleBits[index]
            let isDeny = rules[index].effect == .deny
            let isRoleLevel = rules[index].match.isRoleLevel
            let typeList = typeLists[index]
            let roleList = roleLists[index]
            let productList: [Int]? =
                switch rules[index].match.productIDs {
                case nil, .any?: nil
                case .oneOf(let values)?: values.compactMap { productIndex.index(of: $0) }
                }
            conditions.append(
                RuleConditions(
                    types: rules[index].match.groupTypes == nil ? .any : range(typeList),
                    roles: rules[index].match.roles?.values.isEmpty ?? true ? .any : range(roleList),
                    products: range(productList),
                    isRoleLevel: isRoleLevel,
                    hasGroupIDs: rules[index].match.groupIDs != nil
                )
            )
            if rules[index].match.groupIDs == nil {
                if !isRoleLevel {
                    groupLevel.append(index)
                } else if let productList {
                    for product in productList { byProduct[product].append(index) }
                } else {
                    anyProduct.append(index)
                }
            }
            guard let layer = ruleLayer[index] else { continue }
            for type in typeList {
                let layerType = layer * typeClassTotal + type
                if !isRoleLevel {
                    groupTable.add(cell: layerType, bits: bits, deny: isDeny, pool: &pool)
                    continue
                }
                guard dense else { break }
                for role in roleList {
                    if let productList {
                        for product in productList {
                            productTable.add(
                                cell: (layerType * products.count + product) * roleClassTotal + role,
                                bits: bits,
                                deny: isDeny,
                                pool: &pool
                            )
                        }
                    } else {
                        anyProductTable.add(
                            cell: layerType * roleClassTotal + role,
                            bits: bits,
                            deny: isDeny,
                            pool: &pool
                        )
                    }
                }
            }
        }
        let finalPool = pool.finalize([groupTable, anyProductTable, productTable])
        pairWords = TableStorage(finalPool.words)
        groupCells = TableStorage(finalPool.tables[0])
        anyProductCells = TableStorage(finalPool.tables[1])
        productCells = TableStorage(finalPool.tables[2])
        groupLevelRules = groupLevel
        anyProductRules = anyProduct
        rulesByProduct = byProduct
        ruleConditions = conditions
        self.conditionPool = conditionPool
    }

    /// The most cells the dense role-level tables may hold, and the most cell updates folding the
    /// rules into them may take: 4 Mi each (16 MiB of cells), far above any hand-written policy
    /// (the example policies need a few hundred), and reached only by matches naming thousands of
    /// values in several dimensions at once.
    static let maximumDenseCells = 1 << 22

    /// The bound compiling applies: ``maximumDenseCells`` except in tests, which lower it to
    /// compare the sparse path with the reference on small policies.
    @TaskLocal static var denseCellLimit = maximumDenseCells

    /// Whether the dense role-level tables stay within ``maximumDenseCells`` in size and in the
    /// work of filling them.
    private static func denseRoleTablesFit(
        rules: [RuleDefinition],
        ruleLayers: [Int?],
        typeLists: [[Int]],
        roleLists: [[Int]],
        cellCount: Int
    ) -> Bool {
        let limit = denseCellLimit
        guard cellCount <= limit else { return false }
        var updates = 0
        for index in rules.indices where ruleLayers[index] != nil && rules[index].match.isRoleLevel {
            let productCount =
                switch rules[index].match.productIDs {
                case .oneOf(let values)?: values.count
                case nil, .any?: 1
                }
            let cells = saturatingProduct(typeLists[index].count, roleLists[index].count, productCount)
            updates = saturatingSum(updates, cells)
            if updates > limit { return false }
        }
        return true
    }

    private static func normalized(_ requirements: Requirements) -> Requirements {
        var copy = requirements
        copy.entitlements = Array(Set(requirements.entitlements)).sorted()
        return copy
    }
}
