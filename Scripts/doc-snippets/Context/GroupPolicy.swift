func showSeatControls() {}
func join<Role>(_ groupID: String, as role: Role) {}
