extension CompiledPolicy {
    /// The explanation: the rules naming the capability, each checked condition by condition in each
    /// (merged) group, straight from their definitions rather than through the evaluation tables.
    func explain(
        _ capability: Capability,
        for response: GetCustomerGroupsResponse,
        in context: EvaluationContext,
        group requestedGroupID: String?
    ) throws(GroupPolicyError) -> Explanation {
        guard let capabilityIndex = catalog.index(of: capability.name) else {
            let suggestion =
                Suggestion.closest(to: capability.name, among: catalog.names).map { " (did you mean '\($0)'?)" } ?? ""
            throw GroupPolicyError(
                code: .undeclaredCapability,
                message: "undeclared capability '\(capability.name)'\(suggestion)"
            )
        }
        let groups = response.groups
        if let requestedGroupID, !groups.contains(where: { $0.groupID == requestedGroupID }) {
            var seen: Set<String> = []
            let ids = groups.map(\.groupID).filter { seen.insert($0).inserted }
            let suggestion =
                Suggestion.closest(to: requestedGroupID, among: ids).map { " (did you mean '\($0)'?)" } ?? ""
            throw GroupPolicyError(
                code: .unknownGroup,
                message: "the response has no group '\(requestedGroupID)'\(suggestion)"
            )
        }

        // The rules that name the capability, in set order.
        var grantRules: [RuleReference] = []
        var denyRules: [RuleReference] = []
        for (documentIndex, document) in documents.enumerated() {
            for (ruleIndex, rule) in document.document.rules.enumerated()
            where document.ruleBits[ruleIndex].contains(capabilityIndex) {
                let reference = RuleReference(document: documentIndex, rule: ruleIndex)
                switch rule.effect {
                case .grant: grantRules.append(reference)
                case .deny: denyRules.append(reference)
                }
            }
        }

        var explanations: [GroupExplanation] = []
        for members in mergePlan(groups) {
            let first = groups[members[0]]
            if let requestedGroupID, first.groupID != requestedGroupID { continue }
            let entries = members.count == 1 ? first.roles : members.flatMap { groups[$0].roles }
            explanations.append(
                explainGroup(
                    capability: capability.name,
                    groupID: first.groupID,
                    groupType: first.groupType,
                    entries: entries,
                    context: context,
                    grantRules: grantRules,
                    denyRules: denyRules
                )
            )
        }
        return Explanation(capability: capability, hasGrantRules: !grantRules.isEmpty, groups: explanations)
    }

    /// A rule of the set: its document's index and its index there.
    private struct RuleReference {
        var document: Int
        var rule: Int
    }

    private func explainGroup(
        capability: String,
        groupID: String,
        groupType: GroupType,
        entries: [RoleEntry],
        context: EvaluationContext,
        grantRules: [RuleReference],
        denyRules: [RuleReference]
    ) -> GroupExplanation {
        if context.environment == .production && groupID == GetCustomerGroupsResponse.sandboxPlaceholderGroupID {
            return GroupExplanation(groupID: groupID, groupType: groupType, outcome: .ignored)
        }
        // Per document, each entry's product id as that document's rules see it (sandbox aliases).
        var ruleProductIDs: [Int: [String]] = [:]
        func productIDs(of document: Int) -> [String] {
            if let known = ruleProductIDs[document] { return known }
            let aliased = entries.map {
                documents[document].ruleProductID($0.productID, environment: context.environment)
            }
            ruleProductIDs[document] = aliased
            return aliased
        }

        var grants: [Grant] = []
        var matchedGrant = false
        var nearMisses: [NearMiss] = []
        for reference in grantRules {
            let rule = documents[reference.document].document.rules[reference.rule]
            let label = documents[reference.document].ruleLabels[reference.rule]
            let products = productIDs(of: reference.document)
            let unmet = Self.unmetConditions(
                of: rule,
                groupID: groupID,
                groupType: groupType,
                entries: entries,
                ruleProductIDs: products,
                context: context
            )
            guard unmet.isEmpty else {
                nearMisses.append(NearMiss(rule: label, unmet: unmet))
                continue
            }
            matchedGrant = true
            guard rule.match.isRoleLevel else {
                grants.append(Grant(capability: capability, groupID: groupID, rule: label))
                continue
            }
            var recorded: [(productID: String, ruleProductID: String, role: Role)] = []
            for (entry, ruleProductID) in zip(entries, products)
            where rule.match.matchesEntry(productID: ruleProductID, role: entry.role.rawValue) {
                // Identical entries (a merged duplicate group) yield one grant, as in the decision.
                if recorded.contains(where: {
                    $0.productID == entry.productID && $0.ruleProductID == ruleProductID && $0.role == entry.role
                }) {
                    continue
                }
                recorded.append((entry.productID, ruleProductID, entry.role))
                grants.append(
                    Grant(
                        capability: capability,
                        groupID: groupID,
                        rule: label,
                        productID: ruleProductID,
                        role: entry.role,
                        sandboxProductID: ruleProductID != entry.productID ? entry.productID : nil
                    )
                )
            }
        }
        guard matchedGrant else {
            // Nearest first; the sort is stable, so rule order in the set breaks ties.
            let sorted = nearMisses.enumerated().sorted {
                ($0.element.unmet.count, $0.offset) < ($1.element.unmet.count, $1.offset)
            }
            return GroupExplanation(
                groupID: groupID,
                groupType: groupType,
                outcome: .notGranted,
                nearMisses: sorted.map(\.element)
            )
        }
        var denials: [Denial] = []
        for reference in denyRules {
            let rule = documents[reference.document].document.rules[reference.rule]
            let matches = Self.unmetConditions(
                of: rule,
                groupID: groupID,
                groupType: groupType,
                entries: entries,
                ruleProductIDs: productIDs(of: reference.document),
                context: context
            ).isEmpty
            if matches {
                denials.append(
                    Denial(
                        capability: capability,
                        groupID: groupID,
                        rule: documents[reference.document].ruleLabels[reference.rule]
                    )
                )
            }
        }
        return GroupExplanation(
            groupID: groupID,
            groupType: groupType,
            outcome: denials.isEmpty ? .granted : .denied,
            grants: grants,
            denials: denials
        )
    }

    /// Every condition of a rule that the group or context does not meet, in the documented order;
    /// empty when the rule matches.
    private static func unmetConditions(
        of rule: RuleDefinition,
        groupID: String,
        groupType: GroupType,
        entries: [RoleEntry],
        ruleProductIDs: [String],
        context: EvaluationContext
    ) -> [UnmetCondition] {
        var unmet: [UnmetCondition] = []
        let match = rule.match
        if let types = match.groupTypes, !types.matches(groupType.rawValue) {
            unmet.append(.groupType(expected: types.values.map { GroupType(rawValue: $0) }, actual: groupType))
        }
        if let ids = match.groupIDs, !ids.matches(groupID) {
            unmet.append(.groupID(expected: ids.values, actual: groupID))
        }
        if match.isRoleLevel {
            let satisfied = zip(entries, ruleProductIDs).contains { entry, productID in
                match.matchesEntry(productID: productID, role: entry.role.rawValue)
            }
            if !satisfied {
                unmet.append(
                    .roleEntry(
                        productIDs: match.productIDs.flatMap { $0 == .any ? nil : $0.values },
                        roles: match.roles.flatMap { $0 == .any ? nil : $0.values.map { Role(rawValue: $0) } },
                        actual: zip(entries, ruleProductIDs).map { RoleEntry(productID: $1, role: $0.role) }
                    )
                )
            }
        }
        if let environments = rule.requires.environments, !environments.contains(context.environment) {
            unmet.append(
                .environment(
                    expected: StoreEnvironment.allCases.filter(environments.contains),
                    actual: context.environment
                )
            )
        }
        let missing = rule.requires.entitlements.filter { !context.entitlements.contains($0) }
        if !missing.isEmpty { unmet.append(.entitlements(missing: missing)) }
        return unmet
    }
}
