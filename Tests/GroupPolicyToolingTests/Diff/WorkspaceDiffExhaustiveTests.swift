import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy
@testable import GroupPolicyTooling

/// The workspace diff against brute force over the whole space, for random pairs of small
/// policies: no workspace rows exactly when no scenario's memberships differ, every row's example
/// differs as stated, and every differing scenario of the whole space extends some row.
@Suite(.cpuBound) struct WorkspaceDiffExhaustiveTests {
    @Test(arguments: 0..<6)
    func theWorkspaceDiffIsCompleteAndSound(_ seed: Int) throws {
        var random = RandomInputs(seed: UInt64(seed) &* 7_919 &+ 11)
        let oldWorkspaces = Self.randomWorkspaces(&random)
        // Half the time one workspace of the old version edited, otherwise unrelated workspaces.
        let newWorkspaces = seed % 2 == 0 ? Self.randomWorkspaces(&random) : Self.edit(oldWorkspaces, &random)
        let old = try Self.policy(oldWorkspaces)
        let new = try Self.policy(newWorkspaces)
        let diff = try PolicyDiff(from: old, to: new)
        let space = ScenarioSpace(
            documents: old.compiled.documents.map(\.document) + new.compiled.documents.map(\.document)
        )
        func roles(_ policy: Policy, _ scenario: Scenario) -> [String: WorkspaceMembership.Role] {
            var roles: [String: WorkspaceMembership.Role] = [:]
            for membership in policy.evaluate(scenario.response, in: scenario.context).workspaces {
                roles[membership.workspace.id] = membership.role
            }
            return roles
        }
        for row in diff.workspaceRows {
            #expect(roles(old, row.example)[row.workspace] == row.oldRole, "\(row)")
            #expect(roles(new, row.example)[row.workspace] == row.newRole, "\(row)")
        }
        var differing = 0
        // Per workspace, whether some scenario's membership grows (none, member, admin) and whether
        // one shrinks.
        var widened: Set<String> = []
        var narrowed: Set<String> = []
        func rank(_ role: WorkspaceMembership.Role?) -> Int { role == nil ? 0 : role == .member ? 1 : 2 }
        for scenario in InvariantExhaustiveTests.fullSpace {
            let before = roles(old, scenario)
            let after = roles(new, scenario)
            for workspace in ["w0", "w1"] where before[workspace] != after[workspace] {
                differing += 1
                if rank(after[workspace]) > rank(before[workspace]) {
                    widened.insert(workspace)
                } else {
                    narrowed.insert(workspace)
                }
                let explained = diff.workspaceRows.contains { row in
                    row.workspace == workspace && row.oldRole == before[workspace] && row.newRole == after[workspace]
                        && PolicyDiffExhaustiveTests.contains(Self.asRow(row), scenario, space)
                }
                #expect(
                    explained,
                    "\(workspace) \(String(describing: before[workspace])) -> \(String(describing: after[workspace])) in \(scenario) is in no row of \(diff.workspaceRows.map(WorkspaceDiffTests.describe)); \(oldWorkspaces) -> \(newWorkspaces)"
                )
                if !explained { return }
            }
        }
        #expect((differing == 0) == diff.workspaceRows.isEmpty)
        for workspace in ["w0", "w1"] {
            let expected: PolicyDiff.Verdict =
                widened.contains(workspace)
                ? (narrowed.contains(workspace) ? .widensAndNarrows : .widens)
                : (narrowed.contains(workspace) ? .narrows : .equivalent)
            #expect(diff.verdict(forWorkspace: workspace) == expected, "\(workspace)")
        }
    }

    static func policy(_ workspaces: [String]) throws -> Policy {
        try GroupPolicyTestSupport.policy(
            capabilities: ["c0"],
            rules: #"[ { "id": "r", "capabilities": ["c0"], "match": { "productId": "p0" } } ]"#,
            extra: #""workspaces": [\#(workspaces.joined(separator: ", "))]"#
        )
    }

    /// One or two workspaces (`w0`, `w1`) with random matches, administrator roles and requirements.
    static func randomWorkspaces(_ random: inout RandomInputs) -> [String] {
        (0..<random.int(1...2)).map { Self.randomWorkspace("w\($0)", &random) }
    }

    static func randomWorkspace(_ id: String, _ random: inout RandomInputs) -> String {
        func condition(_ pool: [String], wildcard: Bool) -> String {
            if wildcard && random.chance(0.2) { return "\"*\"" }
            return random.chance(0.5) ? "\"\(random.pick(pool))\"" : random.jsonList(random.subset(pool))
        }
        var match: [String] = []
        if random.chance(0.4) {
            match.append(#""groupType": \#(condition(["ORGANIZATION", "CONSUMER", "ENTERPRISE"], wildcard: false))"#)
        }
        if random.chance(0.15) { match.append(#""groupId": \#(condition(["g0", "g1"], wildcard: false))"#) }
        if random.chance(0.6) { match.append(#""productId": \#(condition(["p0", "p1"], wildcard: true))"#) }
        var parts = [#""id": "\#(id)""#, #""match": {\#(match.joined(separator: ", "))}"#]
        if random.chance(0.4) {
            parts.append(#""adminRoles": \#(random.jsonList(random.subset(["ADMIN", "NONE", "MEMBER"])))"#)
        }
        var requires: [String] = []
        if random.chance(0.2) {
            requires.append(#""environment": \#(condition(["Production", "Sandbox"], wildcard: false))"#)
        }
        if random.chance(0.3) { requires.append(#""entitlements": \#(random.jsonList(random.subset(["e0", "e1"])))"#) }
        if !requires.isEmpty { parts.append(#""requires": {\#(requires.joined(separator: ", "))}"#) }
        return "{ " + parts.joined(separator: ", ") + " }"
    }

    /// One workspace replaced by another random one of the same id, or dropped, or one added.
    static func edit(_ workspaces: [String], _ random: inout RandomInputs) -> [String] {
        var edited = workspaces
        let index = random.int(0...(workspaces.count - 1))
        switch random.int(0...2) {
        case 0 where workspaces.count > 1: edited.remove(at: index)
        case 1 where workspaces.count < 2: edited.append(randomWorkspace("w1", &random))
        default: edited[index] = randomWorkspace("w\(index)", &random)
        }
        return edited
    }

    /// A workspace row as a capability row of the same scenarios, for the containment check.
    static func asRow(_ row: PolicyDiff.WorkspaceRow) -> PolicyDiff.Row {
        PolicyDiff.Row(
            change: .added,
            capability: row.workspace,
            environment: row.environment,
            groupType: row.groupType,
            groupID: row.groupID,
            roles: row.roles,
            entitlements: row.entitlements,
            example: row.example
        )
    }
}
