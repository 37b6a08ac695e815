/// A workspace definition compiled for evaluation: each list of its match and its admin roles as
/// a table looked up by exact bytes, so a definition naming thousands of products costs one lookup
/// per role entry, not a scan of the list: matching is linear in the role entries whatever the
/// definitions list.
struct WorkspaceMatcher: Sendable {
    /// A list of values as a table; `nil` for a condition that is absent or `"*"`.
    private let groupTypes: StringTable?
    private let groupIDs: StringTable?
    private let productIDs: StringTable?
    /// Whether the match names `productId` (a list or `"*"`): the group then needs an entry for it.
    private let namesProducts: Bool
    private let adminRoles: StringTable
    let requires: Requirements

    init(_ definition: WorkspaceDefinition) {
        func table(_ condition: ValueCondition?) -> StringTable? {
            guard case .oneOf(let values)? = condition else { return nil }
            return StringTable(values.map { (key: $0, value: 0) })
        }
        groupTypes = table(definition.match.groupTypes)
        groupIDs = table(definition.match.groupIDs)
        productIDs = table(definition.match.productIDs)
        namesProducts = definition.match.productIDs != nil
        adminRoles = StringTable(definition.adminRoles.map { (key: $0, value: 0) })
        requires = definition.requires
    }

    /// The membership role one group gives in this workspace (see the DocC article "Evaluation
    /// semantics", section "Workspace membership"), the requirements already known to hold.
    ///
    /// - Parameters:
    ///   - groupID: The group's id.
    ///   - groupType: The group's type.
    ///   - entries: The group's role entries.
    ///   - ruleProductIDs: Each entry's product id after sandbox aliasing.
    /// - Returns: `admin` or `member`, or `nil` when the group does not form this workspace.
    func membershipRole(
        groupID: String,
        groupType: GroupType,
        entries: [RoleEntry],
        ruleProductIDs: [String]
    ) -> WorkspaceMembership.Role? {
        if let groupTypes, groupTypes.value(for: groupType.rawValue) == nil { return nil }
        if let groupIDs, groupIDs.value(for: groupID) == nil { return nil }
        var relevant = false
        var admin = false
        for (index, entry) in entries.enumerated() {
            if let productIDs, productIDs.value(for: ruleProductIDs[index]) == nil { continue }
            relevant = true
            if !admin, adminRoles.value(for: entry.role.rawValue) != nil { admin = true }
        }
        // Naming a product requires an entry for it; otherwise every entry (maybe none) counts.
        if namesProducts && !relevant { return nil }
        return admin ? .admin : .member
    }
}
