import GroupPolicy

// What the TypedCapabilities plugin generates from the article's policy.
extension Capability {
    static let workspaceManageSeats: Capability = "workspace.manage-seats"
}

extension Workspace {
    static let team: Workspace = "team"
}

func showSeatControls() {}
func join<Role>(_ groupID: String, as role: Role) {}
