import AppIntegration
import AppStoreGroups
import Foundation
import GroupDecisions
import GroupDecisionsTesting
import GroupPolicy
import Testing

/// The background work in a task group: a policy edit reloads through `run()`, and cancellation
/// stops everything.
@Suite("App services")
struct AppServicesTests {
    static let admin = GetCustomerGroupsResponse(groups: [
        GroupEntry(
            groupID: "900000000000000001",
            groupType: .organization,
            roles: [RoleEntry(productID: "com.example.teams.pro", role: .admin)]
        )
    ])

    @Test("a policy file that changes is reloaded through run(), and the next decision uses it")
    func reloadThroughRun() async throws {
        let directory = try PolicyFiles.copy()
        defer { try? FileManager.default.removeItem(at: directory) }
        let policies = try PolicyStore(contentsOf: directory.path, reloadInterval: .milliseconds(20))
        let decisions = try GroupDecisionService(policies: policies, source: StaticGroupsSource(["admin1": Self.admin]))
        let handler = WorkspaceHandler(decisions: decisions)
        let before = await handler.respond(transactionID: "admin1")
        #expect(before.body.hasPrefix(#"{"controls":["view","manage-seats"],"#))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await AppServices.run(policies: policies, decisions: decisions) {
                    while true { try await Task.sleep(for: .seconds(3600)) }
                }
            }
            // Seat management is taken away from admins.
            let file = directory.appending(path: "team.json")
            let edited = try String(contentsOf: file, encoding: .utf8)
                .replacingOccurrences(of: #""role": "ADMIN""#, with: #""role": "NONE""#)
            try edited.write(to: file, atomically: true, encoding: .utf8)
            var after = await handler.respond(transactionID: "admin1")
            // Up to a minute on a busy machine; a reload every 20 ms takes one poll on a quiet one.
            for _ in 0..<3000 where after.body.contains("manage-seats") {
                try await Task.sleep(for: .milliseconds(20))
                after = await handler.respond(transactionID: "admin1")
            }
            #expect(after.body.hasPrefix(#"{"controls":["view"],"#))
            #expect(policies.generation == 2)
            group.cancelAll()
        }
    }

    @Test("cancelling the task that runs them stops the policies' reloads and the service's work")
    func stopsOnCancellation() async throws {
        // Intervals of an hour: cancellation must not wait them out, and a bound of a minute
        // (room for a busy machine) still rules that out.
        let policies = try PolicyStore(contentsOf: PolicyFiles.directory, reloadInterval: .seconds(3600))
        var configuration = GroupDecisionService.Configuration()
        configuration.localCache.sweepInterval = .seconds(3600)
        let decisions = try GroupDecisionService(
            policies: policies,
            source: StaticGroupsSource([:]),
            configuration: configuration
        )
        let started = ContinuousClock.now
        let app = Task.detached {
            try await AppServices.run(policies: policies, decisions: decisions) {
                while true { try await Task.sleep(for: .seconds(3600)) }
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        app.cancel()
        await #expect(throws: CancellationError.self) { try await app.value }
        #expect(ContinuousClock.now - started < .seconds(60))
    }
}
