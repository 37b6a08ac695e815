extension WorkspaceMembership {
    /// A workspace membership's role: `admin` when a relevant role entry has a role in the
    /// definition's `adminRoles`, otherwise `member`.
    public enum Role: String, Sendable, Hashable, Codable {
        /// Administers the workspace.
        case admin
        /// Belongs to the workspace.
        case member
    }
}
