import GroupPolicy

// Meant not to compile: the policy declares `workspace.manage-seats`, so the generated constant
// is `workspaceManageSeats`, not `workspaceManageSeat`.
let decision = try Policy(contentsOfFile: "team.json").evaluate(GetCustomerGroupsResponse(groups: []))
print(decision.allows(.workspaceManageSeat))
let seats: Capability = .workspaceManageSeat
print(seats)
