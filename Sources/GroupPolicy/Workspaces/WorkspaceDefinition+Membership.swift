extension WorkspaceDefinition {
    /// The membership role one group gives in this workspace (see the DocC article "Evaluation
    /// semantics", section "Workspace membership").
    ///
    /// - Parameters:
    ///   - groupID: The group's id.
    ///   - groupType: The group's type.
    ///   - entries: The group's role entries.
    ///   - ruleProductIDs: Each entry's product id after sandbox aliasing.
    ///   - context: The evaluation context (for `requires`).
    /// - Returns: `admin` or `member`, or `nil` when the group does not form this workspace.
    func membershipRole(
        groupID: String,
        groupType: GroupType,
        entries: [RoleEntry],
        ruleProductIDs: [String],
        context: EvaluationContext
    ) -> WorkspaceMembership.Role? {
        guard requires.hold(in: context), match.matchesGroup(groupID: groupID, groupType: groupType.rawValue) else {
            return nil
        }
        var relevant = false
        var admin = false
        for (index, entry) in entries.enumerated() where match.productIDs?.matches(ruleProductIDs[index]) ?? true {
            relevant = true
            if adminRoles.contains(where: { $0.isExactly(entry.role.rawValue) }) { admin = true }
        }
        // Naming a product requires an entry for it; otherwise every entry (maybe none) counts.
        if match.productIDs != nil && !relevant { return nil }
        return admin ? .admin : .member
    }
}
