import AppIntegration
import AppStoreGroups
import Foundation
import GroupDecisions
import GroupDecisionsTesting
import GroupPolicy

// The app as a process: its policies from the directory named on the command line, customers from a
// StaticGroupsSource, the background work running. It answers one line on standard output per
// command read from standard input: `workspace ID`, `revision`, `quit` (which cancels everything
// and waits for it to stop).
/// One answer per line, written as it is made: the test reading them waits for each.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

guard CommandLine.arguments.count == 2 else {
    say("usage: app-integration-demo POLICIES")
    exit(2)
}
let policies = try PolicyStore(contentsOf: CommandLine.arguments[1], reloadInterval: .milliseconds(50))
let pro = "com.example.teams.pro"
let source = StaticGroupsSource([
    "admin1": GetCustomerGroupsResponse(groups: [
        GroupEntry(
            groupID: "900000000000000001",
            groupType: .organization,
            roles: [RoleEntry(productID: pro, role: .admin)]
        )
    ]),
    "member1": GetCustomerGroupsResponse(groups: [
        GroupEntry(
            groupID: "900000000000000001",
            groupType: .organization,
            roles: [RoleEntry(productID: pro, role: .unassigned)]
        )
    ]),
])
let decisions = try GroupDecisionService(policies: policies, source: source)
let handler = WorkspaceHandler(decisions: decisions)
let app = Task.detached {
    try await AppServices.run(policies: policies, decisions: decisions) {
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}
loop: while let line = readLine() {
    let words = line.split(separator: " ")
    switch words.first {
    case "workspace" where words.count == 2:
        let response = await handler.respond(transactionID: String(words[1]))
        say("\(response.status) \(response.body)")
    case "revision":
        say(policies.revision)
    case "quit":
        app.cancel()
        switch await app.result {
        case .success: say("stopped")
        case .failure(let error): say(error is CancellationError ? "cancelled" : "failed: \(error)")
        }
        break loop
    default:
        say("unknown command")
    }
}
