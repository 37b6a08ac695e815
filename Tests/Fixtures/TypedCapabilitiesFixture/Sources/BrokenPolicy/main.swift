import GroupPolicy

// Meant not to build: team.json grants the undeclared capability `workspace.manage-seat`, so the
// plugin's loader stops the build before this file is compiled.
print(Capability.workspaceManageSeats)
