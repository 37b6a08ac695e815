import GroupPolicyBasics

extension CompiledPolicy {
    /// The most (rule naming the capability, group) pairs one explanation weighs: 1,000,000,
    /// a second or so, each pair perhaps a near miss in the output.
    static let maximumExplainedPairs = 1_000_000

    /// The most bytes of names one explanation may list: 32 MiB, as much as a policy file holds.
    ///
    /// Each near miss lists its rule's values and, for a role-level rule, the group's role entries,
    /// so the pairs alone do not bound the output: a hundred rules naming twenty thousand products
    /// each, in ten thousand groups, would list a hundred gigabytes.
    static let maximumExplainedBytes = 32 << 20

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
        let result = groups.withUnsafeBufferPointer { groups in
            GroupMerge.withPlan(groups) { merge in
                Result { () throws(GroupPolicyError) in
                    try explain(
                        capability,
                        capabilityIndex: capabilityIndex,
                        merge: merge,
                        in: context,
                        group: requestedGroupID
                    )
                }
            }
        }
        return try result.get()
    }

    /// ``explain(_:for:in:group:)`` over the merged groups of the response.
    private func explain(
        _ capability: Capability,
        capabilityIndex: Int,
        merge: GroupMerge,
        in context: EvaluationContext,
        group requestedGroupID: String?
    ) throws(GroupPolicyError) -> Explanation {
        let groups = merge.groups
        // The merged groups to explain: every one, or the one asked about (its id compared by bytes,
        // as the merge compares them).
        let explained = groups.indices.filter { index in
            merge.isFirst(index) && (requestedGroupID.map { groups[index].groupID.isExactly($0) } ?? true)
        }
        if let requestedGroupID, explained.isEmpty {
            let ids = groups.indices.filter(merge.isFirst).map { groups[$0].groupID }
            let suggestion =
                Suggestion.closest(to: requestedGroupID, among: ids).map { " (did you mean '\($0)'?)" } ?? ""
            throw GroupPolicyError(
                code: .unknownGroup,
                message: "the response has no group '\(requestedGroupID)'\(suggestion)"
            )
        }

        // Per document, the rules that name the capability, in rule order.
        var grantRules: [[Int]] = []
        var denyRules: [[Int]] = []
        for document in documents {
            var grants: [Int] = []
            var denies: [Int] = []
            document.ruleBits.forEachRule(containing: capabilityIndex) { ruleIndex in
                switch document.effect(ofRule: ruleIndex) {
                case .grant: grants.append(ruleIndex)
                case .deny: denies.append(ruleIndex)
                }
            }
            grantRules.append(grants)
            denyRules.append(denies)
        }

        // Every group lists every rule naming the capability that it does not meet: bounded by
        // their product, refused at once rather than taking minutes (and gigabytes of near misses).
        let rules = (grantRules + denyRules).reduce(0) { $0 + $1.count }
        let pairs = rules.multipliedReportingOverflow(by: explained.count)
        guard !pairs.overflow, pairs.partialValue <= Self.maximumExplainedPairs else {
            var error = GroupPolicyError(
                code: .limitExceeded,
                message: "explaining '\(capability.name)' would weigh \(rules) rules naming it in each of "
                    + "\(explained.count) groups, over the limit of \(Self.maximumExplainedPairs) rule-group pairs; "
                    + "explain one group"
            )
            error.narrowingParameter = "group"
            throw error
        }

        // What the explanation may list: each rule's values in each group, and each group's role
        // entries once per role-level rule. Counted before anything is built, and refused at once.
        var ruleBytes = 0
        var roleLevelRules = 0
        for (documentIndex, document) in documents.enumerated() {
            for ruleIndex in grantRules[documentIndex] + denyRules[documentIndex] {
                ruleBytes += Self.listedBytes(of: ruleIndex, in: document)
                if document.rules.isRoleLevel(ruleIndex) { roleLevelRules += 1 }
            }
        }
        // An entry costs its two values and, in the JSON, about 32 bytes of keys and punctuation.
        var entryBytes = 0
        for index in explained {
            var member = index
            while member >= 0 {
                for entry in groups[member].roles {
                    entryBytes += entry.productID.utf8.count + entry.role.rawValue.utf8.count + 32
                }
                member = Int(merge.next[member])
            }
        }
        let listedRules = ruleBytes.multipliedReportingOverflow(by: explained.count)
        let listedEntries = entryBytes.multipliedReportingOverflow(by: roleLevelRules)
        let listed = listedRules.partialValue.addingReportingOverflow(listedEntries.partialValue)
        guard !listedRules.overflow, !listedEntries.overflow, !listed.overflow,
            listed.partialValue <= Self.maximumExplainedBytes
        else {
            let total =
                listed.overflow || listedRules.overflow || listedEntries.overflow
                ? "more than \(Int.max)" : "\(listed.partialValue)"
            let hint = requestedGroupID == nil ? "explain one group" : "this group is too large to explain"
            var error = GroupPolicyError(
                code: .limitExceeded,
                message: "explaining '\(capability.name)' would list \(total) bytes of rule values and role entries "
                    + "(\(rules) rules naming it, \(explained.count) groups), over the limit of "
                    + "\(Self.maximumExplainedBytes) bytes; \(hint)"
            )
            if requestedGroupID == nil { error.narrowingParameter = "group" }
            throw error
        }

        let explanations = explained.map { index in
            explainGroup(
                capability: capability.name,
                groupID: groups[index].groupID,
                groupType: groups[index].groupType,
                entries: merge.entries(ofFirst: index),
                context: context,
                grantRules: grantRules,
                denyRules: denyRules
            )
        }
        let hasGrantRules = grantRules.contains { !$0.isEmpty }
        return Explanation(capability: capability, hasGrantRules: hasGrantRules, groups: explanations)
    }

    private func explainGroup(
        capability: String,
        groupID: String,
        groupType: GroupType,
        entries: [RoleEntry],
        context: EvaluationContext,
        grantRules: [[Int]],
        denyRules: [[Int]]
    ) -> Explanation.Group {
        if GroupMerge.ignores(groupID, in: context.environment) {
            return Explanation.Group(groupID: groupID, groupType: groupType, outcome: .ignored)
        }
        let group = GroupFacts(groupID: groupID, groupType: groupType, context: context)
        var grants: [Grant] = []
        var matchedGrant = false
        var nearMisses: [Explanation.NearMiss] = []
        var firstIdentical: [Int32] = []
        nearMisses.reserveCapacity(grantRules.reduce(0) { $0 + $1.count })
        for (documentIndex, document) in documents.enumerated() where !grantRules[documentIndex].isEmpty {
            let seen = seenEntries(entries, by: document, in: context)
            let labels = document.ruleLabels
            // Rules are read in place from the compact table: conditions compare bytes, and values
            // become strings only for the unmet conditions an explanation lists.
            do {
                let rules = document.rules
                for ruleIndex in grantRules[documentIndex] {
                    countWork(1 + entries.count)
                    let matcher = EntryMatcher(ruleIndex, in: document)
                    let unmet = Self.unmetConditions(
                        of: ruleIndex,
                        in: rules,
                        matcher: matcher,
                        group: group,
                        seen: seen
                    )
                    guard unmet.isEmpty else {
                        nearMisses.append(Explanation.NearMiss(rule: labels[ruleIndex], unmet: unmet))
                        continue
                    }
                    matchedGrant = true
                    guard let matcher else {
                        grants.append(Grant(capability: capability, groupID: groupID, rule: labels[ruleIndex]))
                        continue
                    }
                    // Identical entries (a merged duplicate group) yield one grant, as in the decision.
                    if firstIdentical.isEmpty { firstIdentical = IdenticalEntries.firstIdentical(entries) }
                    for index in entries.indices
                    where firstIdentical[index] == Int32(index) && matcher.matches(seen[index]) {
                        let entry = entries[index]
                        let ruleProductID = seen[index].productID
                        grants.append(
                            Grant(
                                capability: capability,
                                groupID: groupID,
                                rule: labels[ruleIndex],
                                productID: ruleProductID,
                                role: entry.role,
                                sandboxProductID: ruleProductID.isExactly(entry.productID) ? nil : entry.productID
                            )
                        )
                    }
                }
            }
        }
        guard matchedGrant else {
            // Nearest first, then rule order: a stable bucket sort by the number of unmet conditions
            // (one to five, one per kind of condition).
            var sorted: [Explanation.NearMiss] = []
            sorted.reserveCapacity(nearMisses.count)
            for count in 1...5 {
                for nearMiss in nearMisses where nearMiss.unmet.count == count { sorted.append(nearMiss) }
            }
            return Explanation.Group(groupID: groupID, groupType: groupType, outcome: .notGranted, nearMisses: sorted)
        }
        var denials: [Denial] = []
        for (documentIndex, document) in documents.enumerated() where !denyRules[documentIndex].isEmpty {
            let seen = seenEntries(entries, by: document, in: context)
            for ruleIndex in denyRules[documentIndex]
            where Self.unmetConditions(
                of: ruleIndex,
                in: document.rules,
                matcher: EntryMatcher(ruleIndex, in: document),
                group: group,
                seen: seen
            ).isEmpty {
                denials.append(
                    Denial(capability: capability, groupID: groupID, rule: document.ruleLabels[ruleIndex])
                )
            }
        }
        return Explanation.Group(
            groupID: groupID,
            groupType: groupType,
            outcome: denials.isEmpty ? .granted : .denied,
            grants: grants,
            denials: denials
        )
    }

    /// What a rule's conditions are checked against, besides the role entries.
    private struct GroupFacts {
        var groupID: String
        var groupType: GroupType
        var context: EvaluationContext
    }

    /// The entries as a document's rules see them, product ids aliased in the sandbox.
    ///
    /// Without aliases they are the entries themselves, shared rather than copied.
    private func seenEntries(
        _ entries: [RoleEntry],
        by document: CompiledDocument,
        in context: EvaluationContext
    ) -> [RoleEntry] {
        let aliases = document.productAliases
        guard context.environment == .sandbox && !aliases.isEmpty else { return entries }
        return entries.map { RoleEntry(productID: aliases[$0.productID] ?? $0.productID, role: $0.role) }
    }

    /// Every condition of a rule that the group or context does not meet, in the documented order.
    ///
    /// Empty when the rule matches. `seen` holds the group's entries as the rule's policy sees them.
    private static func unmetConditions(
        of rule: Int,
        in rules: RuleTable,
        matcher: EntryMatcher?,
        group: GroupFacts,
        seen: [RoleEntry]
    ) -> [Explanation.UnmetCondition] {
        var unmet: [Explanation.UnmetCondition] = []
        unmet.reserveCapacity(3)
        let types = rules.condition(.groupType, of: rule)
        if types.isPresent, !rules.matches(types, group.groupType.rawValue) {
            unmet.append(.groupType(expected: rules.values(types), actual: group.groupType))
        }
        let ids = rules.condition(.groupID, of: rule)
        if ids.isPresent, !rules.matches(ids, group.groupID) {
            unmet.append(.groupID(expected: rules.values(ids), actual: group.groupID))
        }
        if let matcher {
            let products = rules.condition(.productID, of: rule)
            let roles = rules.condition(.role, of: rule)
            if !seen.contains(where: matcher.matches) {
                unmet.append(
                    .roleEntry(
                        productIDs: products.header >= 2 ? rules.values(products) : nil,
                        roles: roles.header >= 2 ? rules.values(roles) : nil,
                        actual: seen
                    )
                )
            }
        }
        // Requirement block 0 is the empty one (most rules): nothing more can be unmet.
        guard rules.hasRequirements(rule) else { return unmet }
        let requires = rules.requires(rule)
        let environment = group.context.environment
        if let environments = requires.environments, !environments.contains(environment) {
            unmet.append(
                .environment(expected: StoreEnvironment.allCases.filter(environments.contains), actual: environment)
            )
        }
        if !requires.entitlements.isEmpty {
            let missing = requires.entitlements.filter { !group.context.entitlements.contains($0) }
            if !missing.isEmpty { unmet.append(.entitlements(missing: missing)) }
        }
        return unmet
    }

    private static let listedKinds: [RuleTable.ConditionKind] = [.groupType, .groupID, .productID, .role]

    /// Bytes the rule may add to one group's explanation: its label and the values its conditions
    /// list, each with room for quotes and a separator.
    private static func listedBytes(of rule: Int, in document: CompiledDocument) -> Int {
        let rules = document.rules
        var bytes = document.ruleLabels[rule].utf8.count + 4
        for kind in Self.listedKinds {
            let condition = rules.condition(kind, of: rule)
            bytes += rules.valueBytes(condition) + 4 * condition.valueCount
        }
        if rules.hasRequirements(rule) {
            for entitlement in rules.requires(rule).entitlements { bytes += entitlement.utf8.count + 4 }
        }
        return bytes
    }
}

/// A role-level rule's product and role conditions, checked through the compiled document's tables
/// (exact bytes, as evaluation compares them), so that checking a group's role entries against the
/// rule costs two lookups per entry rather than a scan of the rule's lists, and making one builds
/// nothing: an explanation makes one per rule naming the capability.
struct EntryMatcher {
    private let document: CompiledDocument
    private let conditions: CompiledDocument.RuleConditions

    /// The matcher of a role-level rule; `nil` for a rule that holds per group.
    init?(_ rule: Int, in document: CompiledDocument) {
        guard document.rules.isRoleLevel(rule) else { return nil }
        self.document = document
        conditions = document.ruleConditions[rule]
    }

    /// Whether the entry (as the rule's policy sees it) has a product and a role the rule accepts.
    func matches(_ entry: RoleEntry) -> Bool {
        // A product or role no rule names is -1 or class 0: only "any" accepts it.
        let product = document.productionProducts.value(for: entry.productID) ?? -1
        guard conditions.products.accepts(product, in: document.conditionPool) else { return false }
        let role = document.roleClasses.value(for: entry.role.rawValue) ?? 0
        return conditions.roles.accepts(role, in: document.conditionPool)
    }
}
