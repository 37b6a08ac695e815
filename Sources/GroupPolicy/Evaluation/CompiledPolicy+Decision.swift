extension CompiledPolicy {
    /// The full decision: per group, the matching rules are found through the indexes (group-level
    /// rules, rules of the entries' products, any-product rules, direct rules), checked against
    /// their definitions, and recorded with the role entries they matched through.
    func decide(_ response: GetCustomerGroupsResponse, context: EvaluationContext) -> Decision {
        let words = catalog.wordCount
        var customer = [UInt64](repeating: 0, count: words)
        var groupDecisions: [GroupDecision] = []
        var memberships: [WorkspaceMembership] = []
        var grants: [Grant] = []
        var denials: [Denial] = []
        var notes: [String] = []
        let groups = response.groups
        var scratch = GroupScratch(words: words)

        for members in mergePlan(groups) {
            let first = groups[members[0]]
            let groupID = first.groupID
            let groupType = first.groupType
            let otherTypes = members.dropFirst().map { groups[$0].groupType }.filter { $0 != groupType }
            if !otherTypes.isEmpty {
                var distinct: [String] = []
                for type in otherTypes where !distinct.contains(type.rawValue) { distinct.append(type.rawValue) }
                notes.append(
                    "group \(groupID) appears \(members.count) times with conflicting groupType "
                        + "(\(([groupType.rawValue] + distinct).joined(separator: ", "))); its role entries were merged "
                        + "and the first groupType, \(groupType.rawValue), applies"
                )
            }
            let entries = members.count == 1 ? first.roles : members.flatMap { groups[$0].roles }

            if context.environment == .production && groupID == GetCustomerGroupsResponse.sandboxPlaceholderGroupID {
                notes.append(
                    "group \(groupID) is Apple's sandbox placeholder; it is ignored in Production "
                        + "(no capabilities, no workspace)"
                )
                groupDecisions.append(
                    GroupDecision(
                        groupID: groupID,
                        groupType: groupType,
                        capabilities: CapabilitySet(
                            catalog: catalog,
                            bits: CapabilityBits(indices: [], wordCount: words)
                        )
                    )
                )
                continue
            }

            evaluateGroup(
                groupID: groupID,
                groupType: groupType,
                entries: entries,
                context: context,
                scratch: &scratch,
                grants: &grants,
                denials: &denials,
                memberships: &memberships
            )
            for word in 0..<words { customer[word] |= scratch.surviving[word] }
            let surviving = scratch.surviving.withUnsafeBufferPointer { CapabilityBits(words: $0) }
            groupDecisions.append(
                GroupDecision(
                    groupID: groupID,
                    groupType: groupType,
                    capabilities: CapabilitySet(catalog: catalog, bits: surviving)
                )
            )
        }
        let customerBits = customer.withUnsafeBufferPointer { CapabilityBits(words: $0) }
        return Decision(
            capabilities: CapabilitySet(catalog: catalog, bits: customerBits),
            groups: groupDecisions,
            workspaces: memberships,
            grants: grants,
            denials: denials,
            notes: notes
        )
    }

    /// One matched grant: (capability, document, rule) and the entries it matched through.
    private struct GrantMatch {
        var capability: Int32
        var document: Int32
        var rule: Int32
        /// The entries, as `matchedEntries[entryStart..<entryStart + entryCount]`; -1 entries for a
        /// group-level rule.
        var entryStart: Int32
        var entryCount: Int32
    }

    /// Working memory for one group, reused across the groups of a decision so that evaluating a
    /// group allocates only what the decision keeps.
    private struct GroupScratch {
        var granted: [UInt64]
        var denied: [UInt64]
        var surviving: [UInt64]
        var grantMatches: [GrantMatch] = []
        var matchedEntries: [Int32] = []
        var denyMatches: [(document: Int32, rule: Int32)] = []
        var denialRecords: [(capability: Int32, document: Int32, rule: Int32)] = []
        /// Role-level matches found through the entries' products: (rule, entry) pairs.
        var pairs: [(rule: Int32, entry: Int32)] = []
        /// Per document, each entry's product id as that document's rules see it.
        var ruleProductIDs: [[String]] = []
        /// For the current document, each entry's interned product (-1: no rule names it) and role class.
        var entryProducts: [Int32] = []
        var entryRoles: [Int32] = []

        init(words: Int) {
            granted = [UInt64](repeating: 0, count: words)
            denied = granted
            surviving = granted
        }

        mutating func reset() {
            for word in granted.indices {
                granted[word] = 0
                denied[word] = 0
            }
            grantMatches.removeAll(keepingCapacity: true)
            matchedEntries.removeAll(keepingCapacity: true)
            denyMatches.removeAll(keepingCapacity: true)
            denialRecords.removeAll(keepingCapacity: true)
            ruleProductIDs.removeAll(keepingCapacity: true)
        }
    }

    /// Finds the rules that match one (merged) group and appends its grants, denials and workspace
    /// memberships; leaves its surviving capabilities in `scratch.surviving`.
    private func evaluateGroup(
        groupID: String,
        groupType: GroupType,
        entries: [RoleEntry],
        context: EvaluationContext,
        scratch: inout GroupScratch,
        grants: inout [Grant],
        denials: inout [Denial],
        memberships: inout [WorkspaceMembership]
    ) {
        let words = catalog.wordCount
        scratch.reset()
        let sandbox = context.environment == .sandbox

        for (documentIndex, document) in documents.enumerated() {
            // The product ids the rules see: aliased in the sandbox, the entries' own otherwise.
            let ruleProductIDs =
                sandbox && !document.productAliases.isEmpty
                ? entries.map { document.ruleProductID($0.productID, environment: .sandbox) }
                : entries.map(\.productID)
            scratch.ruleProductIDs.append(ruleProductIDs)

            // Each entry's product and role as the tables intern them (the sandbox table maps an
            // alias source to its target's product), and the group's type class.
            let products = sandbox ? document.sandboxProducts.reader : document.productionProducts.reader
            let roles = document.roleClasses.reader
            let typeClass = document.typeClasses.value(for: groupType.rawValue) ?? 0
            scratch.entryProducts.removeAll(keepingCapacity: true)
            scratch.entryRoles.removeAll(keepingCapacity: true)
            for entry in entries {
                scratch.entryProducts.append(products.value(for: entry.productID) ?? -1)
                scratch.entryRoles.append(roles.value(for: entry.role.rawValue) ?? 0)
            }

            let layerMask = document.activeLayers(in: context)
            let pool = document.conditionPool
            let conditions = document.ruleConditions
            /// Whether a rule's requirements and group-level conditions hold for this group.
            func holdsForGroup(_ ruleIndex: Int) -> Bool {
                let layer = document.ruleLayers[ruleIndex]
                let requirementsHold =
                    layer >= 0
                    ? layerMask & (1 << UInt64(layer)) != 0 : document.requirementsHold(ofRule: ruleIndex, in: context)
                return requirementsHold && conditions[ruleIndex].types.accepts(typeClass, in: pool)
                    && (!conditions[ruleIndex].hasGroupIDs
                        || document.groupIDsMatch(ofRule: ruleIndex, groupID))
            }
            /// Records a matched rule: its capabilities, and for a grant where they came from.
            func record(_ ruleIndex: Int, entryStart: Int32, entryCount: Int32) {
                switch document.effect(ofRule: ruleIndex) {
                case .grant:
                    document.ruleBits[ruleIndex].forEachIndex { capability in
                        scratch.granted[capability >> 6] |= 1 << UInt64(capability & 63)
                        scratch.grantMatches.append(
                            GrantMatch(
                                capability: Int32(capability),
                                document: Int32(documentIndex),
                                rule: Int32(ruleIndex),
                                entryStart: entryStart,
                                entryCount: entryCount
                            )
                        )
                    }
                case .deny:
                    document.ruleBits[ruleIndex].forEachIndex { capability in
                        scratch.denied[capability >> 6] |= 1 << UInt64(capability & 63)
                    }
                    scratch.denyMatches.append((Int32(documentIndex), Int32(ruleIndex)))
                }
            }

            // Group-level rules (without groupId conditions).
            for ruleIndex in document.groupLevelRules where holdsForGroup(ruleIndex) {
                record(ruleIndex, entryStart: -1, entryCount: -1)
            }
            // Rules with groupId conditions are in no product index: those naming this group (or
            // `"*"`) are checked against every entry (the rules past the 64th requirement layer
            // are in the product indexes too).
            let groupIDRules = (document.directRulesByGroupID[groupID] ?? []) + document.directRulesForEveryGroup
            for ruleIndex in groupIDRules where conditions[ruleIndex].hasGroupIDs && holdsForGroup(ruleIndex) {
                guard conditions[ruleIndex].isRoleLevel else {
                    record(ruleIndex, entryStart: -1, entryCount: -1)
                    continue
                }
                let entryStart = Int32(scratch.matchedEntries.count)
                for index in entries.indices
                where conditions[ruleIndex].products.accepts(scratch.entryProducts[index], in: pool)
                    && conditions[ruleIndex].roles.accepts(scratch.entryRoles[index], in: pool)
                {
                    scratch.matchedEntries.append(Int32(index))
                }
                let entryCount = Int32(scratch.matchedEntries.count) - entryStart
                if entryCount > 0 { record(ruleIndex, entryStart: entryStart, entryCount: entryCount) }
            }
            // Role-level rules through each entry's product (its rules accept that product) and the
            // any-product rules: (rule, entry) pairs, then one record per rule with its entries in
            // response order. Work grows with the matches, not with rules x entries.
            scratch.pairs.removeAll(keepingCapacity: true)
            for index in entries.indices {
                let role = scratch.entryRoles[index]
                let product = scratch.entryProducts[index]
                if product >= 0 {
                    for ruleIndex in document.rulesByProduct[Int(product)]
                    where conditions[ruleIndex].roles.accepts(role, in: pool) {
                        scratch.pairs.append((Int32(ruleIndex), Int32(index)))
                    }
                }
                for ruleIndex in document.anyProductRules where conditions[ruleIndex].roles.accepts(role, in: pool) {
                    scratch.pairs.append((Int32(ruleIndex), Int32(index)))
                }
            }
            scratch.pairs.sort { ($0.rule, $0.entry) < ($1.rule, $1.entry) }
            var position = 0
            while position < scratch.pairs.count {
                let ruleIndex = scratch.pairs[position].rule
                var end = position
                while end < scratch.pairs.count && scratch.pairs[end].rule == ruleIndex { end += 1 }
                if holdsForGroup(Int(ruleIndex)) {
                    let entryStart = Int32(scratch.matchedEntries.count)
                    var previous: Int32 = -1
                    // A rule naming one product twice lists the same entry twice: once is enough.
                    for pair in scratch.pairs[position..<end] where pair.entry != previous {
                        scratch.matchedEntries.append(pair.entry)
                        previous = pair.entry
                    }
                    record(
                        Int(ruleIndex),
                        entryStart: entryStart,
                        entryCount: Int32(scratch.matchedEntries.count) - entryStart
                    )
                }
                position = end
            }
            for workspace in document.workspaces {
                if let role = workspace.membershipRole(
                    groupID: groupID,
                    groupType: groupType,
                    entries: entries,
                    ruleProductIDs: ruleProductIDs,
                    context: context
                ) {
                    memberships.append(
                        WorkspaceMembership(workspace: Workspace(workspace.id), groupID: groupID, role: role)
                    )
                }
            }
        }

        for word in 0..<words { scratch.surviving[word] = scratch.granted[word] & ~scratch.denied[word] }
        func survives(_ capability: Int32) -> Bool {
            scratch.surviving[Int(capability) >> 6] & (1 << UInt64(capability & 63)) != 0
        }

        // Grants: by capability (sorted = catalog order), then document and rule order, then entry.
        scratch.grantMatches.sort { ($0.capability, $0.document, $0.rule) < ($1.capability, $1.document, $1.rule) }
        for match in scratch.grantMatches where survives(match.capability) {
            let capability = catalog.names[Int(match.capability)]
            let rule = documents[Int(match.document)].ruleLabels[Int(match.rule)]
            guard match.entryCount >= 0 else {
                grants.append(Grant(capability: capability, groupID: groupID, rule: rule))
                continue
            }
            let ruleProductIDs = scratch.ruleProductIDs[Int(match.document)]
            let matched = scratch.matchedEntries[Int(match.entryStart)..<Int(match.entryStart + match.entryCount)]
            for (position, index) in zip(matched.indices, matched) {
                let entry = entries[Int(index)]
                let ruleProductID = ruleProductIDs[Int(index)]
                // Identical entries (a merged duplicate group) yield one grant.
                let repeated = matched[matched.startIndex..<position].contains { earlier in
                    entries[Int(earlier)].role == entry.role && entries[Int(earlier)].productID == entry.productID
                        && ruleProductIDs[Int(earlier)] == ruleProductID
                }
                if repeated { continue }
                grants.append(
                    Grant(
                        capability: capability,
                        groupID: groupID,
                        rule: rule,
                        productID: ruleProductID,
                        role: entry.role,
                        sandboxProductID: ruleProductID != entry.productID ? entry.productID : nil
                    )
                )
            }
        }

        // Denials: only capabilities that would otherwise have been granted here.
        for (document, rule) in scratch.denyMatches {
            documents[Int(document)].ruleBits[Int(rule)].forEachIndex { capability in
                if scratch.granted[capability >> 6] & (1 << UInt64(capability & 63)) != 0 {
                    scratch.denialRecords.append((Int32(capability), document, rule))
                }
            }
        }
        scratch.denialRecords.sort { ($0.capability, $0.document, $0.rule) < ($1.capability, $1.document, $1.rule) }
        for record in scratch.denialRecords {
            denials.append(
                Denial(
                    capability: catalog.names[Int(record.capability)],
                    groupID: groupID,
                    rule: documents[Int(record.document)].ruleLabels[Int(record.rule)]
                )
            )
        }
    }
}
