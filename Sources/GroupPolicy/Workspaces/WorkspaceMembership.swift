/// The customer's membership in one shared workspace: a workspace definition matched one group.
public struct WorkspaceMembership: Sendable, Hashable {
    /// The workspace definition that matched.
    public var workspace: Workspace
    /// The group that forms the workspace (the administrator's and members' shared group).
    public var groupID: String
    /// Whether the customer administers the workspace or is a member.
    public var role: WorkspaceMembership.Role

    /// Creates a membership.
    public init(workspace: Workspace, groupID: String, role: WorkspaceMembership.Role) {
        self.workspace = workspace
        self.groupID = groupID
        self.role = role
    }
}
