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

            let outcome = evaluateGroup(groupID: groupID, groupType: groupType, entries: entries, context: context)
            for word in 0..<words { customer[word] |= outcome.surviving[word] }
            let surviving = outcome.surviving.withUnsafeBufferPointer { CapabilityBits(words: $0) }
            groupDecisions.append(
                GroupDecision(
                    groupID: groupID,
                    groupType: groupType,
                    capabilities: CapabilitySet(catalog: catalog, bits: surviving)
                )
            )
            grants += outcome.grants
            denials += outcome.denials
            memberships += outcome.memberships
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

    private struct GroupOutcome {
        var surviving: [UInt64]
        var grants: [Grant]
        var denials: [Denial]
        var memberships: [WorkspaceMembership]
    }

    /// One matched grant: (capability, document, rule) and the entries it matched through.
    private struct GrantMatch {
        var capability: Int
        var document: Int
        var rule: Int
        /// Indices into the group's entries; `nil` for a group-level rule.
        var entries: [Int]?
    }

    private func evaluateGroup(
        groupID: String,
        groupType: GroupType,
        entries: [RoleEntry],
        context: EvaluationContext
    ) -> GroupOutcome {
        let words = catalog.wordCount
        var granted = [UInt64](repeating: 0, count: words)
        var denied = [UInt64](repeating: 0, count: words)
        var grantMatches: [GrantMatch] = []
        var denyMatches: [(document: Int, rule: Int)] = []
        var memberships: [WorkspaceMembership] = []
        // Per document, each entry's product id as that document's rules see it.
        var ruleProductIDsByDocument: [[String]] = []

        for (documentIndex, document) in documents.enumerated() {
            let ruleProductIDs = entries.map { document.ruleProductID($0.productID, environment: context.environment) }
            ruleProductIDsByDocument.append(ruleProductIDs)
            var candidates = Set(document.groupLevelRules)
            candidates.formUnion(document.anyProductRules)
            candidates.formUnion(document.directRules)
            for productID in ruleProductIDs {
                if let product = document.productionProducts.value(for: productID) {
                    candidates.formUnion(document.rulesByProduct[Int(product)])
                }
            }
            for ruleIndex in candidates.sorted() {
                let rule = document.document.rules[ruleIndex]
                guard rule.requires.hold(in: context),
                    rule.match.matchesGroup(groupID: groupID, groupType: groupType.rawValue)
                else { continue }
                var matchedEntries: [Int]?
                if rule.match.isRoleLevel {
                    let matched = entries.indices.filter { index in
                        rule.match.matchesEntry(productID: ruleProductIDs[index], role: entries[index].role.rawValue)
                    }
                    guard !matched.isEmpty else { continue }
                    matchedEntries = matched
                }
                let bits = document.ruleBits[ruleIndex]
                switch rule.effect {
                case .grant:
                    for capability in bits.indices {
                        granted[capability >> 6] |= 1 << UInt64(capability & 63)
                        grantMatches.append(
                            GrantMatch(
                                capability: capability,
                                document: documentIndex,
                                rule: ruleIndex,
                                entries: matchedEntries
                            )
                        )
                    }
                case .deny:
                    for capability in bits.indices { denied[capability >> 6] |= 1 << UInt64(capability & 63) }
                    denyMatches.append((documentIndex, ruleIndex))
                }
            }
            for workspace in document.document.workspaces {
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

        let surviving = (0..<words).map { granted[$0] & ~denied[$0] }
        func has(_ bits: [UInt64], _ capability: Int) -> Bool {
            bits[capability >> 6] & (1 << UInt64(capability & 63)) != 0
        }

        // Grants: by capability (sorted = catalog order), then document and rule order, then entry.
        grantMatches.sort { ($0.capability, $0.document, $0.rule) < ($1.capability, $1.document, $1.rule) }
        var grants: [Grant] = []
        for match in grantMatches where has(surviving, match.capability) {
            let capability = catalog.names[match.capability]
            let rule = documents[match.document].ruleLabels[match.rule]
            guard let matched = match.entries else {
                grants.append(Grant(capability: capability, groupID: groupID, rule: rule))
                continue
            }
            var seen: [Grant] = []
            for index in matched {
                let entry = entries[index]
                let ruleProductID = ruleProductIDsByDocument[match.document][index]
                let grant = Grant(
                    capability: capability,
                    groupID: groupID,
                    rule: rule,
                    productID: ruleProductID,
                    role: entry.role,
                    sandboxProductID: ruleProductID != entry.productID ? entry.productID : nil
                )
                // Identical entries (a merged duplicate group) yield one grant.
                if !seen.contains(grant) {
                    seen.append(grant)
                    grants.append(grant)
                }
            }
        }

        // Denials: only capabilities that would otherwise have been granted here.
        var denialRecords: [(capability: Int, document: Int, rule: Int)] = []
        for (document, rule) in denyMatches {
            for capability in documents[document].ruleBits[rule].indices where has(granted, capability) {
                denialRecords.append((capability, document, rule))
            }
        }
        denialRecords.sort { ($0.capability, $0.document, $0.rule) < ($1.capability, $1.document, $1.rule) }
        let denials = denialRecords.map { record in
            Denial(
                capability: catalog.names[record.capability],
                groupID: groupID,
                rule: documents[record.document].ruleLabels[record.rule]
            )
        }
        return GroupOutcome(surviving: surviving, grants: grants, denials: denials, memberships: memberships)
    }
}
