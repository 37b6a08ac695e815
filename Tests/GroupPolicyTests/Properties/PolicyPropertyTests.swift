import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Properties that must hold for every policy, response and context, checked on many seeded random
/// cases per run (a failure names its seed and reproduces).
@Suite(.cpuBound) struct PolicyPropertyTests {
    static let cases = 600

    /// A random policy document, parsed (so it is valid), with capabilities `c0...c7`.
    static func document(_ random: inout RandomInputs, id: String = "p") throws -> PolicyDocument {
        let json = random.policyJSON(id: id, capabilityCount: 8, contentEvery: 4)
        return try Policy.parseDocument(bytes(json), fileName: nil, limits: .default)
    }

    /// Per-group capability names of a decision, keyed by group id.
    static func perGroup(_ decision: Decision) -> [String: Set<String>] {
        Dictionary(uniqueKeysWithValues: decision.groups.map { ($0.groupID, Set($0.capabilities.names)) })
    }

    @Test func addingADenyRuleNeverAddsACapability() throws {
        var random = RandomInputs(seed: 101)
        for index in 0..<Self.cases {
            let base = try Self.document(&random)
            guard var deny = try Self.document(&random).rules.randomElement(using: &random.generator) else { continue }
            deny.effect = .deny
            deny.id = "extra-deny"
            var extended = base
            extended.rules.append(deny)
            let before = Policy(documents: [base])
            let after = Policy(documents: [extended])
            for _ in 0..<4 {
                let (response, context) = (random.response(), random.context())
                let old = before.evaluate(response, in: context)
                let new = after.evaluate(response, in: context)
                #expect(Set(new.capabilities.names).isSubset(of: old.capabilities.names), "case \(index)")
                for (group, capabilities) in Self.perGroup(new) {
                    #expect(capabilities.isSubset(of: Self.perGroup(old)[group] ?? []), "case \(index)")
                }
            }
        }
    }

    @Test func addingAGrantRuleNeverRemovesACapability() throws {
        var random = RandomInputs(seed: 202)
        for index in 0..<Self.cases {
            let base = try Self.document(&random)
            // A grant rule that passed validation elsewhere (content only with entitlements).
            guard var grant = try Self.document(&random).rules.filter({ $0.effect == .grant }).first else { continue }
            grant.id = "extra-grant"
            var extended = base
            extended.rules.insert(grant, at: random.int(0...base.rules.count))
            let before = Policy(documents: [base])
            let after = Policy(documents: [extended])
            for _ in 0..<4 {
                let (response, context) = (random.response(), random.context())
                let old = before.evaluate(response, in: context)
                let new = after.capabilities(for: response, in: context)
                #expect(Set(old.capabilities.names).isSubset(of: new.names), "case \(index)")
                for (group, capabilities) in Self.perGroup(old) {
                    #expect(
                        capabilities.isSubset(of: Self.perGroup(after.evaluate(response, in: context))[group] ?? [])
                    )
                }
            }
        }
    }

    @Test func removingEveryRuleYieldsNothing() throws {
        var random = RandomInputs(seed: 303)
        for _ in 0..<Self.cases {
            var document = try Self.document(&random)
            document.rules = []
            let empty = Policy(documents: [document])
            let (response, context) = (random.response(), random.context())
            let decision = empty.evaluate(response, in: context)
            #expect(decision.capabilities.isEmpty)
            #expect(decision.groups.allSatisfy { $0.capabilities.isEmpty })
            #expect(decision.grants.isEmpty && decision.denials.isEmpty)
            #expect(empty.capabilities(for: response, in: context).isEmpty)
        }
    }

    @Test func theProductionPlaceholderNeverGetsAnything() throws {
        var random = RandomInputs(seed: 404)
        let placeholder = GetCustomerGroupsResponse.sandboxPlaceholderGroupID
        for _ in 0..<Self.cases {
            let policy = Policy(documents: [try Self.document(&random)])
            var response = random.response()
            var group = GetCustomerGroupsResponse.sandboxPlaceholder.groups[0]
            group.roles = random.response().groups.first?.roles ?? group.roles
            response.groups.insert(group, at: random.int(0...response.groups.count))
            var context = random.context()
            context.environment = .production
            let decision = policy.evaluate(response, in: context)
            #expect(decision.capabilities(inGroup: placeholder)?.isEmpty == true)
            #expect(!decision.workspaces.contains { $0.groupID == placeholder })
            #expect(!decision.grants.contains { $0.groupID == placeholder })
            #expect(decision.notes.contains { $0.contains("sandbox placeholder") })
            // The customer's set is exactly what the other groups give.
            var others = response
            others.groups.removeAll { $0.groupID == placeholder }
            #expect(policy.capabilities(for: response, in: context) == policy.capabilities(for: others, in: context))
        }
    }

    /// Content capabilities (every fourth, `c3` and `c7`) never appear without the entitlements of
    /// a rule that grants them; with no entitlements at all, never.
    @Test func contentNeverAppearsWithoutItsEntitlements() throws {
        var random = RandomInputs(seed: 505)
        for _ in 0..<Self.cases {
            let document = try Self.document(&random)
            let policy = Policy(documents: [document])
            let response = random.response()
            var context = random.context()
            if random.chance(0.5) { context.entitlements = [] }
            let decision = policy.evaluate(response, in: context)
            for capability in ["c3", "c7"] where decision.allows(Capability(capability)) {
                #expect(!context.entitlements.isEmpty)
                let justified = decision.grants(of: Capability(capability)).allSatisfy { grant in
                    let rule = document.rules.first { $0.id == grant.rule }
                    return rule.map { !$0.requires.entitlements.isEmpty && $0.requires.hold(in: context) } ?? false
                }
                #expect(justified, "\(capability) granted without entitlements")
            }
        }
    }

    /// A policy granting a content capability without entitlements never loads, however it is
    /// written.
    @Test func contentWithoutEntitlementsNeverLoads() {
        var random = RandomInputs(seed: 606)
        for _ in 0..<200 {
            let match = random.chance(0.5) ? #", "match": { "role": "*" }"# : ""
            let requires = random.chance(0.5) ? #", "requires": { "environment": "Production" }"# : ""
            let json = """
                { "format": "group-policy/v1", "id": "p", "capabilities": { "t": { "kind": "content" }, "v": "v" },
                  "rules": [ { "id": "r", "capabilities": ["v", "t"]\(match)\(requires) } ] }
                """
            #expect(diagnostics(json).map(\.kind) == [.contentWithoutEntitlements])
        }
    }

    /// decode -> encode -> decode is the identity for Apple's models, with hostile strings too.
    @Test func appleModelsRoundTrip() throws {
        var random = RandomInputs(seed: 707)
        let strange = ["", "\"", "\\", "é", "😀", "\u{0}", "\n\t", "a\u{1F}b", "</script>", "\u{2028}", "%2F"]
        func text() -> String {
            random.chance(0.3) ? strange[random.int(0...(strange.count - 1))] : String(random.int(0...999_999_999))
        }
        for _ in 0..<Self.cases {
            let response = GetCustomerGroupsResponse(
                groups: (0..<random.int(0...4)).map { _ in
                    GroupEntry(
                        groupID: text(),
                        groupType: GroupType(random.chance(0.8) ? random.pick(RandomInputs.types) : text()),
                        roles: (0..<random.int(0...5)).map { _ in RoleEntry(productID: text(), role: Role(text())) }
                    )
                }
            )
            let decoded = try GetCustomerGroupsResponse(jsonBytes: response.jsonBytes())
            #expect(decoded == response)
            #expect(try GetCustomerGroupsResponse(jsonBytes: decoded.jsonBytes()) == decoded)
            #expect(try GetCustomerGroupsResponse(jsonBytes: Array(response.jsonString(pretty: true).utf8)) == response)
            #expect(
                try JSONDecoder().decode(GetCustomerGroupsResponse.self, from: Data(response.jsonBytes())) == response
            )

            let members = GetGroupMembersResponse(
                members: (0..<random.int(0...5)).map { _ in GroupMemberEntry(appTransactionID: text()) },
                hasMore: random.chance(0.5),
                paginationToken: random.chance(0.5) ? text() : nil
            )
            #expect(try GetGroupMembersResponse(jsonBytes: members.jsonBytes()) == members)
        }
    }
}
