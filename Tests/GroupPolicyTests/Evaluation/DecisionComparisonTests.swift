import GroupPolicy
import Testing

/// `Decision.capabilityChanges(from:through:)`, the comparison a shadow is built on, through the
/// public API only: what a team writing its own shadow calls.
@Suite("Comparing two decisions")
struct DecisionComparisonTests {
    static let live = """
        { "format": "group-policy/v1", "id": "live",
          "capabilities": { "view": "v", "manage": "m", "export": "e" },
          "rules": [
            { "id": "members-view", "match": { "groupType": "ORGANIZATION" }, "capabilities": ["view"] },
            { "id": "admins", "match": { "role": "ADMIN" }, "capabilities": ["manage", "export"] },
            { "id": "no-export", "effect": "deny", "match": { "groupId": "org2" }, "capabilities": ["export"] } ] }
        """

    /// A group of `type` whose customer holds `roles`, each for product `pro`.
    static func group(_ id: String, _ type: GroupType, _ roles: [Role] = []) -> GroupEntry {
        GroupEntry(groupID: id, groupType: type, roles: roles.map { RoleEntry(productID: "pro", role: $0) })
    }

    /// Two organizations (the second given twice, merged) and a family.
    static let response = GetCustomerGroupsResponse(
        groups: [
            group("org1", .organization, [.admin]), group("fam1", .consumer), group("org2", .organization, [.admin]),
            group("org2", .organization),
        ]
    )

    /// A change of `capability` in the decision's group at `group`, with the rules behind it.
    static func change(
        _ group: Int,
        _ capability: Capability,
        gained: Bool,
        _ live: [String],
        _ candidate: [String]
    )
        -> CapabilityChange
    {
        CapabilityChange(
            group: group,
            capability: capability,
            gained: gained,
            liveRules: live,
            candidateRules: candidate
        )
    }

    static func policy(_ text: String) throws -> Policy {
        try Policy(jsonBytes: Array(text.utf8), fileName: "p.json")
    }

    /// The same capabilities on both sides (compared bit for bit): a deny rule moved from one
    /// organization to another takes `export` from the first and gives it back to the second, with
    /// the rules behind it under each policy (the grants that survived, and the denials).
    @Test func sameCapabilities() throws {
        let live = try Self.policy(Self.live)
        let candidate = try Self.policy(
            Self.live.replacingOccurrences(of: #""groupId": "org2""#, with: #""groupId": "org1""#)
        )
        let correspondence = CapabilityCorrespondence(from: live, to: candidate)
        #expect(correspondence.applies(from: live, to: candidate))
        #expect(!correspondence.applies(from: candidate, to: live))
        let served = live.evaluate(Self.response)
        let shadow = candidate.evaluate(Self.response)
        let changes = try #require(shadow.capabilityChanges(from: served, through: correspondence))
        #expect(
            changes == [
                Self.change(0, "export", gained: false, ["admins"], ["no-export"]),
                Self.change(2, "export", gained: true, ["no-export"], ["admins"]),
            ]
        )
        #expect(served.groups.map(\.groupID) == ["org1", "fam1", "org2"])
        #expect(served.groups[changes[1].group].groupID == "org2")
        // Compared with itself, a decision changes nothing.
        #expect(served.capabilityChanges(from: served, through: CapabilityCorrespondence(from: live, to: live)) == [])
    }

    /// Different capabilities on both sides (matched by name): within a group, what is lost comes
    /// first, then what is gained, each by name; a capability only one side declares is lost or
    /// gained wherever a group has it.
    @Test func differentCapabilities() throws {
        let live = try Self.policy(Self.live)
        let candidate = try Self.policy(
            """
            { "format": "group-policy/v1", "id": "live",
              "capabilities": { "view": "v", "manage": "m", "audit": "a" },
              "rules": [
                { "id": "members-view", "match": { "groupType": "ORGANIZATION" }, "capabilities": ["view"] },
                { "id": "auditors", "match": { "role": "ADMIN" }, "capabilities": ["audit"] },
                { "id": "family-view", "match": { "groupType": "CONSUMER" }, "capabilities": ["view"] } ] }
            """
        )
        let correspondence = CapabilityCorrespondence(from: live, to: candidate)
        let served = live.evaluate(Self.response)
        let shadow = candidate.evaluate(Self.response)
        let changes = try #require(shadow.capabilityChanges(from: served, through: correspondence))
        #expect(
            changes == [
                Self.change(0, "export", gained: false, ["admins"], []),
                Self.change(0, "manage", gained: false, ["admins"], []),
                Self.change(0, "audit", gained: true, [], ["auditors"]),
                Self.change(1, "view", gained: true, [], ["family-view"]),
                Self.change(2, "manage", gained: false, ["admins"], []),
                Self.change(2, "audit", gained: true, [], ["auditors"]),
            ]
        )
    }

    /// Decisions of different responses, or a correspondence made for other policies: `nil`.
    @Test func mismatchedInputsGiveNil() throws {
        let live = try Self.policy(Self.live)
        let candidate = try Self.policy(Self.live)
        let correspondence = CapabilityCorrespondence(from: live, to: candidate)
        let shadow = candidate.evaluate(Self.response)
        let other = live.evaluate(GetCustomerGroupsResponse(groups: [Self.group("org1", .organization)]))
        #expect(shadow.capabilityChanges(from: other, through: correspondence) == nil)
        let served = live.evaluate(Self.response)
        #expect(served.capabilityChanges(from: shadow, through: correspondence) == nil)
        #expect(shadow.capabilityChanges(from: served, through: correspondence) == [])
    }
}
