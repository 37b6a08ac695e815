import GroupPolicyBasics

/// The per-request side of a compiled document: what a context activates, and the fast path's
/// accumulation of each group's (grant, deny) bits from the tables.
extension CompiledDocument {
    /// The layers whose requirements hold in `context`, as a bit mask.
    @inline(__always)
    func activeLayers(in context: EvaluationContext) -> UInt64 {
        var mask = context.environment == .sandbox ? sandboxLayers : productionLayers
        for (index, requirements) in entitlementLayers where requirements.hold(in: context) {
            mask |= 1 << UInt64(index)
        }
        return mask
    }

    /// The product id a rule sees for an entry's product id (aliased in the sandbox).
    func ruleProductID(_ productID: String, environment: StoreEnvironment) -> String {
        environment == .sandbox ? productAliases.valueExactly(for: productID) ?? productID : productID
    }

    /// ORs into each group's (grant, deny) bit sets what this document's rules give it.
    ///
    /// Every step is an OR, so a merged group's entries can arrive in any order. No allocation and
    /// no reference counting: the tables are read through pointers this document owns.
    ///
    /// - Parameters:
    ///   - groups: The response's groups.
    ///   - first: For each group, the index of the first group with its id (whose type and id
    ///     apply to the merged group), or -1 for a group that gets nothing (the placeholder in
    ///     Production).
    ///   - context: The request's context (which layers are active, aliasing in the sandbox).
    ///   - bits: For group `g` (a first occurrence), grant words at `g * 2W` and deny words right
    ///     after, `W` being `wordCount`; `groups.count * 2W` words in all.
    func accumulate(
        groups: UnsafeBufferPointer<GroupEntry>,
        first: UnsafeBufferPointer<Int32>,
        context: EvaluationContext,
        bits: UnsafeMutablePointer<UInt64>
    ) {
        let words = wordCount
        let typeClassCount = self.typeClassCount
        let layerMask = activeLayers(in: context)
        let products = context.environment == .sandbox ? sandboxProducts.reader : productionProducts.reader
        let roles = roleClasses.reader
        let types = typeClasses.reader
        let groupCells = self.groupCells.buffer
        for index in 0..<groups.count {
            let target = Int(first[index])
            guard target >= 0 else { continue }
            let grant = bits + target &* 2 &* words
            // A merged group takes the first occurrence's type.
            let type = Int(types.value(for: groups[target].groupType.rawValue) ?? 0)
            var layers = layerMask
            while layers != 0 {
                let layer = layers.trailingZeroBitCount
                layers &= layers &- 1
                // layer < layers.count and type < typeClassCount: in range.
                or(groupCells[layer &* typeClassCount &+ type], into: grant)
            }
            accumulateEntries(
                groups[index].roles,
                type: type,
                layerMask: layerMask,
                products: products,
                roles: roles,
                into: grant
            )
        }
        guard !directRules.isEmpty else { return }
        for index in 0..<groups.count {
            let target = Int(first[index])
            guard target >= 0 else { continue }
            let group = groups[target]
            accumulateDirectRules(
                groupID: group.groupID,
                groupType: group.groupType,
                roles: groups[index].roles,
                context: context,
                grant: bits + target * 2 * words,
                deny: bits + target * 2 * words + words
            )
        }
    }

    /// ORs pair `pair` (0: nothing) into a group's grant words and the deny words right after them.
    @inline(__always)
    private func or(_ pair: UInt32, into grant: UnsafeMutablePointer<UInt64>) {
        guard pair != 0 else { return }
        let words = wordCount
        let pairs = pairWords.buffer
        // Cells hold pair indices below pairs.count / 2W (PairPool.finalize), so the reads are in
        // range; the buffer's subscript still checks in debug builds.
        let base = Int(pair) &* (words &* 2)
        if words == 1 {
            grant[0] |= pairs[base]
            grant[1] |= pairs[base &+ 1]
            return
        }
        var word = 0
        while word < words {
            grant[word] |= pairs[base &+ word]
            grant[words &+ word] |= pairs[base &+ words &+ word]
            word += 1
        }
    }

    /// The role-level part of ``accumulate(groups:first:context:bits:)`` for one group's entries.
    ///
    /// Per entry: its role class and product, then one any-product cell and one product cell per
    /// active layer. Kept out of line and small, so the two string lookups inline into the loop.
    @inline(never)
    private func accumulateEntries(
        _ entries: [RoleEntry],
        type: Int,
        layerMask: UInt64,
        products: StringTable.Reader,
        roles: StringTable.Reader,
        into grant: UnsafeMutablePointer<UInt64>
    ) {
        guard hasDenseRoleTables else {
            accumulateEntriesSparsely(
                entries,
                type: type,
                layerMask: layerMask,
                products: products,
                roles: roles,
                into: grant
            )
            return
        }
        let typeClassCount = self.typeClassCount
        let roleClassCount = self.roleClassCount
        let productCount = self.productCount
        let anyProductCells = self.anyProductCells.buffer
        let productCells = self.productCells.buffer
        for entry in entries {
            let role = Int(roles.value(for: entry.role.rawValue) ?? 0)
            let product = productCount == 0 ? -1 : Int(products.value(for: entry.productID) ?? -1)
            var layers = layerMask
            while layers != 0 {
                let layer = layers.trailingZeroBitCount
                layers &= layers &- 1
                // Every index is built from classes in range (layer < layers.count, type <
                // typeClassCount, role < roleClassCount, 0 <= product < productCount), so the
                // tables' sizes (PairPool, CellTableBuilder counts) bound it.
                let layerType = layer &* typeClassCount &+ type
                or(anyProductCells[layerType &* roleClassCount &+ role], into: grant)
                if product >= 0 {
                    or(productCells[(layerType &* productCount &+ product) &* roleClassCount &+ role], into: grant)
                }
            }
        }
    }

    /// ``accumulateEntries(_:type:layerMask:products:roles:into:)`` without dense tables: each
    /// entry's candidate rules (those naming its product, and the any-product rules) are checked
    /// against the entry's role class and the group's type class, so the work is bounded by the
    /// rules' conditions rather than by the product of the dimensions.
    @inline(never)
    private func accumulateEntriesSparsely(
        _ entries: [RoleEntry],
        type: Int,
        layerMask: UInt64,
        products: StringTable.Reader,
        roles: StringTable.Reader,
        into grant: UnsafeMutablePointer<UInt64>
    ) {
        let deny = grant + wordCount
        func apply(_ ruleIndex: Int, role: Int32) {
            let layer = ruleLayers[ruleIndex]
            // Direct rules (layer -1) are checked by accumulateDirectRules.
            guard layer >= 0, layerMask & (1 << UInt64(layer)) != 0 else { return }
            let conditions = ruleConditions[ruleIndex]
            guard conditions.types.accepts(Int32(type), in: conditionPool),
                conditions.roles.accepts(role, in: conditionPool)
            else { return }
            ruleBits[ruleIndex].or(into: rules.effect(ruleIndex) == .grant ? grant : deny)
        }
        for entry in entries {
            let role = roles.value(for: entry.role.rawValue) ?? 0
            let product = productCount == 0 ? -1 : Int(products.value(for: entry.productID) ?? -1)
            if product >= 0 {
                for ruleIndex in rulesByProduct[product] { apply(ruleIndex, role: role) }
            }
            for ruleIndex in anyProductRules { apply(ruleIndex, role: role) }
        }
    }

    /// The rules outside the tables, checked one by one against a group and its entries.
    private func accumulateDirectRules(
        groupID: String,
        groupType: GroupType,
        roles: [RoleEntry],
        context: EvaluationContext,
        grant: UnsafeMutablePointer<UInt64>,
        deny: UnsafeMutablePointer<UInt64>
    ) {
        for index in directRulesByGroupID[groupID] ?? [] { applyDirectRule(index) }
        for index in directRulesForEveryGroup { applyDirectRule(index) }
        func applyDirectRule(_ index: Int) {
            guard rules.requires(index).hold(in: context),
                rules.matches(rules.condition(.groupType, of: index), groupType.rawValue),
                rules.matches(rules.condition(.groupID, of: index), groupID)
            else { return }
            if rules.isRoleLevel(index) {
                let products = rules.condition(.productID, of: index)
                let roleCondition = rules.condition(.role, of: index)
                let matched = roles.contains { entry in
                    rules.matches(products, ruleProductID(entry.productID, environment: context.environment))
                        && rules.matches(roleCondition, entry.role.rawValue)
                }
                guard matched else { return }
            }
            ruleBits[index].or(into: rules.effect(index) == .grant ? grant : deny)
        }
    }
}
