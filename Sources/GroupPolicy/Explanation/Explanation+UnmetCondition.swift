extension Explanation {
    /// One condition of a grant rule that a group or the evaluation context does not meet.
    ///
    /// The cases are the conditions of the policy format: a rule's `match` (group type, group id, and
    /// one role entry's product and role) and its `requires` (environment, entitlements). Expected
    /// values are the rule's own, as its policy file writes them (shared with the loaded policy, so
    /// explaining does not copy them).
    public enum UnmetCondition: Sendable, Hashable {
        /// The group's type is not one the rule's `match.groupType` lists.
        case groupType(expected: [String], actual: GroupType)
        /// The group's id is not one the rule's `match.groupId` lists.
        case groupID(expected: [String], actual: String)
        /// No role entry of the group has both a product and a role the rule's match accepts.
        ///
        /// `productIDs` and `roles` are `nil` when the rule accepts any value (`"*"`, or the key left
        /// out). `actual` holds the group's entries, in response order, with the product ids the rule's
        /// policy sees (after sandbox aliasing); it is empty for groups without role entries, such as
        /// every `CONSUMER` group.
        case roleEntry(productIDs: [String]?, roles: [String]?, actual: [RoleEntry])
        /// The context's environment is not one the rule's `requires.environment` lists.
        case environment(expected: [StoreEnvironment], actual: StoreEnvironment)
        /// The entitlements the rule's `requires.entitlements` lists and the context lacks, in the
        /// rule's order.
        case entitlements(missing: [String])

        /// The condition's name as the explanation's JSON spells it: `groupType`, `groupId`,
        /// `roleEntry`, `environment` or `entitlements`.
        public var name: String {
            switch self {
            case .groupType: "groupType"
            case .groupID: "groupId"
            case .roleEntry: "roleEntry"
            case .environment: "environment"
            case .entitlements: "entitlements"
            }
        }
    }
}
