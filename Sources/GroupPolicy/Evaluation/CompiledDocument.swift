/// One policy document compiled for evaluation: strings interned to integers, capability sets as
/// deduplicated bit sets, and every rule folded into lookup tables, so a request costs one table
/// lookup per role entry whatever the number of rules.
///
/// Tables are indexed by *layer* (one per distinct `requires`, layer 0 being "no requirement"),
/// group type class, product, and role class. Class 0 of types and roles stands for every value
/// the policy does not name; such values can only match `"*"` or an absent condition.
final class CompiledDocument: Sendable {
    let document: PolicyDocument
    /// How provenance names each rule: its id, qualified as `policy/rule` in a set of several.
    let ruleLabels: [String]
    /// Each rule's capabilities over the set's catalog.
    let ruleBits: [CapabilityBits]

    // Interning
    let productionProducts: StringTable
    /// Like `productionProducts`, but sandbox alias sources map to their target's index (or -1).
    let sandboxProducts: StringTable
    let typeNames: [String]
    let roleNames: [String]
    let productCount: Int
    var typeClassCount: Int { typeNames.count + 1 }
    var roleClassCount: Int { roleNames.count + 1 }

    // Layers: which are active depends on the context only.
    let layers: [Requirements]
    private let environmentLayerMask: [StoreEnvironment: UInt64]
    /// Layers that need entitlements, with their masks (checked per request).
    private let entitlementLayers: [(index: Int, requirements: Requirements)]

    // Tables: each cell is an index into `pairWords` (0 = nothing).
    let wordCount: Int
    /// Pair `k`: grant words at `k * 2W`, deny words right after.
    let pairWords: [UInt64]
    let groupCells: [UInt32]
    let anyProductCells: [UInt32]
    let productCells: [UInt32]
    /// Rules evaluated one by one: those with a `groupId` condition (few, and usually specific),
    /// and those past the 64th distinct `requires`.
    let directRules: [Int]

    // Candidate lists for provenance (rules that can match through a given path).
    let groupLevelRules: [Int]
    let anyProductRules: [Int]
    let rulesByProduct: [[Int]]

    init(document: PolicyDocument, catalog: CapabilityCatalog, qualifyRuleIDs: Bool) {
        self.document = document
        let rules = document.rules
        ruleLabels = rules.map { qualifyRuleIDs ? "\(document.id)/\($0.id)" : $0.id }
        wordCount = catalog.wordCount
        ruleBits = rules.map { rule in
            CapabilityBits(indices: rule.capabilities.compactMap(catalog.index(of:)), wordCount: catalog.wordCount)
        }

        // Intern the names the rules use.
        var types: [String] = []
        var roles: [String] = []
        var products: [String] = []
        var productIndex: [String: Int] = [:]
        for rule in rules {
            for type in rule.match.groupTypes?.values ?? [] where !types.contains(type) { types.append(type) }
            for role in rule.match.roles?.values ?? [] where !roles.contains(role) { roles.append(role) }
            for product in rule.match.productIDs?.values ?? [] where productIndex[product] == nil {
                productIndex[product] = products.count
                products.append(product)
            }
        }
        typeNames = types
        roleNames = roles
        productCount = products.count
        let productEntries = products.enumerated().map { (key: $0.element, value: Int32($0.offset)) }
        productionProducts = StringTable(productEntries)
        // In the sandbox an alias source *is* its target (the source's own name never reaches a
        // rule), so its entry goes first and shadows a rule naming the source directly.
        let aliasEntries = document.productAliases.sorted { $0.key < $1.key }.map { alias in
            (key: alias.key, value: Int32(productIndex[alias.value] ?? -1))
        }
        sandboxProducts = StringTable(aliasEntries + productEntries)

        // Layers: one per distinct requirement, at most 64 (the rest are evaluated directly).
        var layers: [Requirements] = [.none]
        var ruleLayer: [Int?] = []
        var direct: [Int] = []
        for (index, rule) in rules.enumerated() {
            if rule.match.groupIDs != nil {
                direct.append(index)
                ruleLayer.append(nil)
                continue
            }
            let normalized = Self.normalized(rule.requires)
            if let layer = layers.firstIndex(of: normalized) {
                ruleLayer.append(layer)
            } else if layers.count < 64 {
                ruleLayer.append(layers.count)
                layers.append(normalized)
            } else {
                direct.append(index)
                ruleLayer.append(nil)
            }
        }
        self.layers = layers
        var environmentMasks: [StoreEnvironment: UInt64] = [:]
        var entitlementLayers: [(Int, Requirements)] = []
        for environment in StoreEnvironment.allCases {
            var mask: UInt64 = 0
            for (index, layer) in layers.enumerated() where layer.entitlements.isEmpty {
                if layer.environments?.contains(environment) ?? true { mask |= 1 << UInt64(index) }
            }
            environmentMasks[environment] = mask
        }
        for (index, layer) in layers.enumerated() where !layer.entitlements.isEmpty {
            entitlementLayers.append((index, layer))
        }
        environmentLayerMask = environmentMasks
        self.entitlementLayers = entitlementLayers
        directRules = direct

        // Fold the rules into the tables.
        let typeClasses = types.count + 1
        let roleClasses = roles.count + 1
        let layerCount = layers.count
        var pool = PairPool(wordCount: catalog.wordCount)
        var groupTable = CellTableBuilder(count: layerCount * typeClasses)
        var anyProductTable = CellTableBuilder(count: layerCount * typeClasses * roleClasses)
        var productTable = CellTableBuilder(count: layerCount * typeClasses * products.count * roleClasses)
        var groupLevel: [Int] = []
        var anyProduct: [Int] = []
        var byProduct = [[Int]](repeating: [], count: products.count)
        for (index, rule) in rules.enumerated() {
            let bits = ruleBits[index]
            let isDeny = rule.effect == .deny
            let typeList: [Int] =
                rule.match.groupTypes.map { condition in
                    condition.values.compactMap { types.firstIndex(of: $0).map { $0 + 1 } }
                }
                ?? Array(0..<typeClasses)
            let roleList: [Int] =
                switch rule.match.roles {
                case nil, .any?: Array(0..<roleClasses)
                case .oneOf(let values)?: values.compactMap { roles.firstIndex(of: $0).map { $0 + 1 } }
                }
            let productList: [Int]? =
                switch rule.match.productIDs {
                case nil, .any?: nil
                case .oneOf(let values)?: values.compactMap { productIndex[$0] }
                }
            if rule.match.groupIDs == nil {
                if !rule.match.isRoleLevel {
                    groupLevel.append(index)
                } else if let productList {
                    for product in productList { byProduct[product].append(index) }
                } else {
                    anyProduct.append(index)
                }
            }
            guard let layer = ruleLayer[index] else { continue }
            for type in typeList {
                let layerType = layer * typeClasses + type
                if !rule.match.isRoleLevel {
                    groupTable.add(cell: layerType, bits: bits, deny: isDeny, pool: &pool)
                    continue
                }
                for role in roleList {
                    if let productList {
                        for product in productList {
                            productTable.add(
                                cell: (layerType * products.count + product) * roleClasses + role,
                                bits: bits,
                                deny: isDeny,
                                pool: &pool
                            )
                        }
                    } else {
                        anyProductTable.add(cell: layerType * roleClasses + role, bits: bits, deny: isDeny, pool: &pool)
                    }
                }
            }
        }
        let finalPool = pool.finalize([groupTable, anyProductTable, productTable])
        pairWords = finalPool.words
        groupCells = finalPool.tables[0]
        anyProductCells = finalPool.tables[1]
        productCells = finalPool.tables[2]
        groupLevelRules = groupLevel
        anyProductRules = anyProduct
        rulesByProduct = byProduct
    }

    private static func normalized(_ requirements: Requirements) -> Requirements {
        var copy = requirements
        copy.entitlements = Array(Set(requirements.entitlements)).sorted()
        return copy
    }

    // MARK: Per request

    /// The layers whose requirements hold in `context`, as a bit mask.
    @inline(__always)
    func activeLayers(in context: EvaluationContext) -> UInt64 {
        var mask = environmentLayerMask[context.environment] ?? 1
        for (index, requirements) in entitlementLayers where requirements.hold(in: context) {
            mask |= 1 << UInt64(index)
        }
        return mask
    }

    @inline(__always)
    func typeClass(of groupType: GroupType) -> Int {
        var index = 0
        while index < typeNames.count {
            if typeNames[index] == groupType.rawValue { return index + 1 }
            index += 1
        }
        return 0
    }

    @inline(__always)
    func roleClass(of role: Role) -> Int {
        var index = 0
        while index < roleNames.count {
            if roleNames[index] == role.rawValue { return index + 1 }
            index += 1
        }
        return 0
    }

    /// The product id a rule sees for an entry's product id (aliased in the sandbox).
    func ruleProductID(_ productID: String, environment: StoreEnvironment) -> String {
        environment == .sandbox ? document.productAliases[productID] ?? productID : productID
    }

    /// ORs into `grant` and `deny` what this document's rules give one group through the given entries.
    ///
    /// Calling it again for more entries of the same group (duplicates in a response) accumulates
    /// correctly, because every step is an OR.
    func accumulate(
        groupID: String,
        groupType: GroupType,
        roles: [RoleEntry],
        context: EvaluationContext,
        layerMask: UInt64,
        grant: UnsafeMutablePointer<UInt64>,
        deny: UnsafeMutablePointer<UInt64>
    ) {
        let words = wordCount
        let typeClasses = typeClassCount
        let roleClasses = roleClassCount
        let type = typeClass(of: groupType)
        let products = context.environment == .sandbox ? sandboxProducts : productionProducts
        pairWords.withUnsafeBufferPointer { pairs in
            @inline(__always) func or(_ pair: UInt32) {
                guard pair != 0 else { return }
                let base = Int(pair) &* (words &* 2)
                var word = 0
                while word < words {
                    grant[word] |= pairs[base &+ word]
                    deny[word] |= pairs[base &+ words &+ word]
                    word += 1
                }
            }
            var layers = layerMask
            while layers != 0 {
                let layer = layers.trailingZeroBitCount
                layers &= layers - 1
                or(groupCells[layer * typeClasses + type])
            }
            for entry in roles {
                let role = roleClass(of: entry.role)
                let product = productCount == 0 ? -1 : Int(products.value(for: entry.productID) ?? -1)
                var layers = layerMask
                while layers != 0 {
                    let layer = layers.trailingZeroBitCount
                    layers &= layers - 1
                    let layerType = layer * typeClasses + type
                    or(anyProductCells[layerType * roleClasses + role])
                    if product >= 0 {
                        or(productCells[(layerType * productCount + product) * roleClasses + role])
                    }
                }
            }
        }
        for index in directRules {
            let rule = document.rules[index]
            guard rule.requires.hold(in: context),
                rule.match.matchesGroup(groupID: groupID, groupType: groupType.rawValue)
            else { continue }
            if rule.match.isRoleLevel {
                let matched = roles.contains { entry in
                    rule.match.matchesEntry(
                        productID: ruleProductID(entry.productID, environment: context.environment),
                        role: entry.role.rawValue
                    )
                }
                guard matched else { continue }
            }
            let target = rule.effect == .grant ? grant : deny
            switch ruleBits[index] {
            case .small(let word):
                target[0] |= word
            case .large(let ruleWords):
                for (position, word) in ruleWords.enumerated() { target[position] |= word }
            }
        }
    }
}

/// Deduplicates (grant, deny) bit-set pairs; pair 0 is the empty pair.
struct PairPool {
    let wordCount: Int
    /// Working pairs while tables are built, 2W words each.
    var scratch: [UInt64] = []
    var scratchCount = 0

    init(wordCount: Int) {
        self.wordCount = wordCount
    }

    mutating func newScratchPair() -> Int {
        scratch.append(contentsOf: repeatElement(0, count: 2 * wordCount))
        scratchCount += 1
        return scratchCount - 1
    }

    mutating func or(scratchPair: Int, bits: CapabilityBits, deny: Bool) {
        let base = scratchPair * 2 * wordCount + (deny ? wordCount : 0)
        switch bits {
        case .small(let word): scratch[base] |= word
        case .large(let words): for (position, word) in words.enumerated() { scratch[base + position] |= word }
        }
    }

    /// Turns the tables' scratch references into deduplicated final pair indices.
    func finalize(_ tables: [CellTableBuilder]) -> (words: [UInt64], tables: [[UInt32]]) {
        var words = [UInt64](repeating: 0, count: 2 * wordCount)
        var indexByContent: [ArraySlice<UInt64>: UInt32] = [words[...]: 0]
        var finalIndexOfScratch = [UInt32](repeating: 0, count: scratchCount)
        for pair in 0..<scratchCount {
            let content = scratch[(pair * 2 * wordCount)..<((pair + 1) * 2 * wordCount)]
            if let existing = indexByContent[content] {
                finalIndexOfScratch[pair] = existing
            } else {
                let index = UInt32(words.count / (2 * wordCount))
                words.append(contentsOf: content)
                indexByContent[content] = index
                finalIndexOfScratch[pair] = index
            }
        }
        let finalTables = tables.map { table in
            table.cells.map { $0 == 0 ? 0 : finalIndexOfScratch[Int($0) - 1] }
        }
        return (words, finalTables)
    }
}

/// A table of cells under construction: each cell refers to a scratch pair (1-based; 0 = empty).
struct CellTableBuilder {
    var cells: [UInt32]

    init(count: Int) {
        cells = [UInt32](repeating: 0, count: count)
    }

    mutating func add(cell: Int, bits: CapabilityBits, deny: Bool, pool: inout PairPool) {
        if cells[cell] == 0 { cells[cell] = UInt32(pool.newScratchPair() + 1) }
        pool.or(scratchPair: Int(cells[cell]) - 1, bits: bits, deny: deny)
    }
}
