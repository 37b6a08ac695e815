import GroupPolicyBasics

/// What a customer's groups let the app present, for one response and context, with the reasons.
///
/// A decision is about presentation only: it never says what content the customer is entitled to
/// (that comes from transactions, and reaches capabilities only through `requires.entitlements`).
/// Every grant and denial is scoped to the group it matched in; the customer's capabilities are
/// the union over all groups.
///
/// Evaluation records groups, workspaces and provenance as compact indices into the (immutable)
/// compiled policy and the response; ``groups``, ``workspaces``, ``grants``, ``denials`` and
/// ``notes`` build their arrays each time they are read. The queries (``allows(_:inGroup:)``,
/// ``capabilities(inGroup:)``, the counts) and the JSON work from the compact form.
public struct Decision: Sendable {
    /// Every capability the customer has in at least one group, sorted.
    public let capabilities: CapabilitySet
    /// The policy that made the decision, whose tables the records index.
    let policy: CompiledPolicy
    /// The response's groups, which the records index.
    let responseGroups: [GroupEntry]
    /// Whether the decision was made for the sandbox (product aliases apply to grants).
    let sandbox: Bool
    let records: DecisionProvenance

    /// One entry per group of the response, in response order (duplicates merged), including groups
    /// that give nothing.
    ///
    /// Reading it builds the array; ``groupCount`` and ``capabilities(inGroup:)`` do not.
    public var groups: [GroupDecision] {
        records.groups.indices.map { ordinal in
            let group = records.groups[ordinal]
            let entry = responseGroups[Int(group.first)]
            return GroupDecision(
                groupID: entry.groupID,
                groupType: entry.groupType,
                capabilities: capabilities(of: ordinal)
            )
        }
    }

    /// The shared workspaces the customer belongs to, in response order, then definition order.
    ///
    /// Reading it builds the array; ``workspaceCount`` and ``memberships(in:)`` do not.
    public var workspaces: [WorkspaceMembership] {
        records.memberships.map(membership)
    }

    /// For each capability that survived in a group, each rule that granted it there (and through
    /// which role entry), ordered by group, capability, rule, role entry.
    ///
    /// Reading it builds the array; ``grantCount`` and ``grants(of:)`` do not.
    public var grants: [Grant] {
        records.grants.map(grant)
    }

    /// For each capability a deny rule removed from a group where it would otherwise have been
    /// granted, each such deny rule, ordered by group, capability, rule.
    ///
    /// Reading it builds the array; ``denialCount`` does not.
    public var denials: [Denial] {
        records.denials.map { record in
            Denial(
                capability: policy.catalog.names[Int(record.capability)],
                groupID: groupID(of: record.group),
                rule: policy.documents[Int(record.document)].ruleLabels[Int(record.rule)]
            )
        }
    }

    /// Remarks about the input: the sandbox placeholder ignored in Production, a group repeated with
    /// conflicting types.
    ///
    /// Reading it builds the array (most decisions have none).
    public var notes: [String] {
        var notes: [String] = []
        guard records.groups.contains(where: { $0.flags != 0 }) else { return notes }
        responseGroups.withUnsafeBufferPointer { responseGroups in
            GroupMerge.withPlan(responseGroups) { merge in
                for group in records.groups where group.flags != 0 {
                    let first = responseGroups[Int(group.first)]
                    let groupID = first.groupID
                    if group.flags & DecisionProvenance.Group.conflictingTypes != 0 {
                        // The types in order of first appearance, each once (by bytes, as they matched).
                        var types = ExactNameIndex()
                        var occurrences = 0
                        var member = Int(group.first)
                        while member >= 0 {
                            occurrences += 1
                            types.insert(responseGroups[member].groupType.rawValue)
                            member = Int(merge.next[member])
                        }
                        countWork(occurrences)
                        let firstType = first.groupType.rawValue
                        notes.append(
                            "group \(groupID) appears \(occurrences) times with conflicting groupType "
                                + "(\(types.names.joined(separator: ", "))); its role entries were merged "
                                + "and the first groupType, \(firstType), applies"
                        )
                    }
                    if group.flags & DecisionProvenance.Group.placeholder != 0 {
                        notes.append(
                            "group \(groupID) is Apple's sandbox placeholder; it is ignored in Production "
                                + "(no capabilities, no workspace)"
                        )
                    }
                }
            }
        }
        return notes
    }

    /// The number of groups (``groups``'s count), without building them.
    public var groupCount: Int { records.groups.count }

    /// The number of workspace memberships (``workspaces``'s count), without building them.
    public var workspaceCount: Int { records.memberships.count }

    /// The number of grants (``grants``'s count), without building them.
    public var grantCount: Int { records.grants.count }

    /// The number of denials (``denials``'s count), without building them.
    public var denialCount: Int { records.denials.count }

    /// Whether the customer has `capability` in any group.
    public func allows(_ capability: Capability) -> Bool {
        capabilities.contains(capability.name)
    }

    /// Whether the customer has `capability` in the group `groupID`.
    ///
    /// Group ids compare by their bytes, as evaluation merges groups: a precomposed "é" and "e"
    /// followed by a combining accent are two groups.
    public func allows(_ capability: Capability, inGroup groupID: String) -> Bool {
        guard let ordinal = ordinal(ofGroup: groupID), let index = policy.catalog.index(of: capability.name) else {
            return false
        }
        let group = records.groups[ordinal]
        let words = policy.catalog.wordCount
        let word = words == 1 ? group.bits : records.words[Int(group.bits) + (index >> 6)]
        return word & (1 << UInt64(index & 63)) != 0
    }

    /// The capabilities one group gives, or `nil` when the response has no such group (its id
    /// compared by bytes, as in ``allows(_:inGroup:)``).
    public func capabilities(inGroup groupID: String) -> CapabilitySet? {
        ordinal(ofGroup: groupID).map(capabilities(of:))
    }

    /// The customer's memberships in one kind of workspace (one per matching group).
    public func memberships(in workspace: Workspace) -> [WorkspaceMembership] {
        records.memberships.filter { workspaceID(of: $0) == workspace.id }.map(membership)
    }

    /// The grants of one capability, across groups.
    public func grants(of capability: Capability) -> [Grant] {
        guard let index = policy.catalog.index(of: capability.name) else { return [] }
        return records.grants.filter { $0.capability == index }.map(grant)
    }

    // MARK: From the records

    /// The merged group's position among the decision's groups, by id (its bytes, as groups are
    /// merged by them).
    func ordinal(ofGroup groupID: String) -> Int? {
        records.groups.firstIndex { responseGroups[Int($0.first)].groupID.isExactly(groupID) }
    }

    func groupID(of ordinal: Int32) -> String {
        responseGroups[Int(records.groups[Int(ordinal)].first)].groupID
    }

    /// The surviving capabilities of the group at `ordinal`.
    func capabilities(of ordinal: Int) -> CapabilitySet {
        let group = records.groups[ordinal]
        let words = policy.catalog.wordCount
        let bits: CapabilityBits =
            words == 1 ? .small(group.bits) : .large(Array(records.words[Int(group.bits)..<Int(group.bits) + words]))
        return CapabilitySet(catalog: policy.catalog, bits: bits)
    }

    /// The workspace definition's id (the one read of the policy's workspaces outside evaluation).
    func workspaceID(of record: DecisionProvenance.Membership) -> String {
        policy.documents[Int(record.document)].workspaces[Int(record.workspace)].id
    }

    func membership(_ record: DecisionProvenance.Membership) -> WorkspaceMembership {
        WorkspaceMembership(
            workspace: Workspace(workspaceID(of: record)),
            groupID: groupID(of: record.group),
            role: record.isAdmin ? .admin : .member
        )
    }

    /// The role entry a grant matched through, or `nil` for a group-level grant.
    func entry(of record: DecisionProvenance.Grant) -> RoleEntry? {
        guard record.entryGroup >= 0 else { return nil }
        return responseGroups[Int(record.entryGroup)].roles[Int(record.entryRole)]
    }

    /// The product id as the granting rule sees it: aliased in the sandbox.
    func ruleProductID(_ productID: String, document: Int32) -> String {
        sandbox ? policy.documents[Int(document)].ruleProductID(productID, environment: .sandbox) : productID
    }

    func grant(_ record: DecisionProvenance.Grant) -> Grant {
        let capability = policy.catalog.names[Int(record.capability)]
        let rule = policy.documents[Int(record.document)].ruleLabels[Int(record.rule)]
        guard let entry = entry(of: record) else {
            return Grant(capability: capability, groupID: groupID(of: record.group), rule: rule)
        }
        let productID = ruleProductID(entry.productID, document: record.document)
        return Grant(
            capability: capability,
            groupID: groupID(of: record.group),
            rule: rule,
            productID: productID,
            role: entry.role,
            sandboxProductID: productID.isExactly(entry.productID) ? nil : entry.productID
        )
    }
}
