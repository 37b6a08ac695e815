public import GroupPolicy

extension PolicyDiff {
    /// One class of scenarios in which a customer's membership in a shared workspace changes.
    ///
    /// The group forms the workspace in one version and not in the other, or as an administrator
    /// in one and as a member in the other. `nil` stands for any value of a dimension.
    ///
    /// Memberships are what decisions list in `workspaces` (the decision server's
    /// `/workspace/members` authorizes on them), so a diff that left them out would call a
    /// policy moving a workspace from one group type to another unchanged.
    public struct WorkspaceRow: Sendable, Hashable {
        /// The workspace's id.
        public var workspace: String
        /// The membership the old version gives, or `nil` for none.
        public var oldRole: WorkspaceMembership.Role?
        /// The membership the new version gives, or `nil` for none.
        public var newRole: WorkspaceMembership.Role?
        /// The environment, or `nil` for both.
        public var environment: StoreEnvironment?
        /// The group's type, or `nil` for any type (any type that has role entries, when
        /// ``roles`` is not empty).
        public var groupType: String?
        /// The group's id, or `nil` for any id.
        public var groupID: String?
        /// The group's role entries, exactly (at most one per product).
        public var roles: [EntryPattern]
        /// The entitlements of the context, exactly.
        public var entitlements: [String]
        /// One concrete scenario of the class.
        public var example: Scenario
    }
}

extension PolicyDiff.WorkspaceRow: ScenarioClassRow {
    /// The workspace, then memberships gained before roles changed before memberships lost.
    var subject: [String] {
        let order = oldRole == nil ? "0" : newRole == nil ? "2" : "1"
        return [workspace, order, oldRole?.rawValue ?? "", newRole?.rawValue ?? ""]
    }
}
