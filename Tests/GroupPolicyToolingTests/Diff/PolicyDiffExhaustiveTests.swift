import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy
@testable import GroupPolicyTooling

/// The diff against brute force over the whole space, for random pairs of small policies: no rows
/// exactly when no scenario differs, every row's example differs as stated, and every differing
/// scenario of the whole space extends some row.
@Suite(.cpuBound) struct PolicyDiffExhaustiveTests {
    @Test(arguments: 0..<16)
    func theDiffIsCompleteAndSound(_ seed: Int) throws {
        var random = RandomInputs(seed: UInt64(seed) &* 104_729 &+ 3)
        let old = try policy(InvariantExhaustiveTests.randomPolicy(&random))
        // Half the time a small edit of the old version, otherwise an unrelated policy.
        let new = try policy(
            seed % 2 == 0 ? InvariantExhaustiveTests.randomPolicy(&random) : Self.edit(old, &random)
        )
        let diff = try PolicyDiff(from: old, to: new)
        let space = ScenarioSpace(
            documents: old.compiled.documents.map(\.document) + new.compiled.documents.map(\.document)
        )

        for row in diff.rows {
            let before = old.evaluate(row.example.response, in: row.example.context).capabilities.contains(
                row.capability
            )
            let after = new.evaluate(row.example.response, in: row.example.context).capabilities.contains(
                row.capability
            )
            #expect((before, after) == (row.change == .added ? (false, true) : (true, false)), "\(row)")
        }
        var differing = 0
        // Per capability, whether some scenario of the whole space gains it, and whether one loses it.
        var gained: Set<String> = []
        var lost: Set<String> = []
        for scenario in InvariantExhaustiveTests.fullSpace {
            let before = old.capabilities(for: scenario.response, in: scenario.context)
            let after = new.capabilities(for: scenario.response, in: scenario.context)
            for capability in ["c0", "c1", "c2"] where before.contains(capability) != after.contains(capability) {
                differing += 1
                if after.contains(capability) { gained.insert(capability) } else { lost.insert(capability) }
                let change: PolicyDiff.Change = after.contains(capability) ? .added : .removed
                let explained = diff.rows.contains { row in
                    row.change == change && row.capability == capability && Self.contains(row, scenario, space)
                }
                #expect(explained, "\(change) \(capability) in \(scenario) is in no row of \(diff.rows)")
                if !explained { return }
            }
        }
        #expect((differing == 0) == diff.rows.isEmpty)
        // The verdicts are the whole space's, capability by capability and overall.
        func verdict(_ widens: Bool, _ narrows: Bool) -> PolicyDiff.Verdict {
            widens ? (narrows ? .widensAndNarrows : .widens) : (narrows ? .narrows : .equivalent)
        }
        for capability in ["c0", "c1", "c2"] {
            #expect(
                diff.verdict(forCapability: capability)
                    == verdict(gained.contains(capability), lost.contains(capability)),
                "\(capability)"
            )
        }
        #expect(diff.verdict == verdict(!gained.isEmpty, !lost.isEmpty))
    }

    /// Drops, adds or flips one rule.
    static func edit(_ policy: Policy, _ random: inout RandomInputs) -> String {
        let document = policy.compiled.documents[0].document
        var rules = document.rules.map { rule -> String in
            var match: [String] = []
            func list(_ condition: ValueCondition?) -> String? {
                switch condition {
                case nil: nil
                case .any?: "\"*\""
                case .oneOf(let values)?: random.jsonList(values)
                }
            }
            if let value = list(rule.match.groupTypes) { match.append(#""groupType": \#(value)"#) }
            if let value = list(rule.match.groupIDs) { match.append(#""groupId": \#(value)"#) }
            if let value = list(rule.match.productIDs) { match.append(#""productId": \#(value)"#) }
            if let value = list(rule.match.roles) { match.append(#""role": \#(value)"#) }
            var requires: [String] = []
            if let environments = rule.requires.environments {
                requires.append(#""environment": \#(random.jsonList(environments.map(\.rawValue).sorted()))"#)
            }
            if !rule.requires.entitlements.isEmpty {
                requires.append(#""entitlements": \#(random.jsonList(rule.requires.entitlements))"#)
            }
            let effect = rule.effect == .deny ? #", "effect": "deny""# : ""
            return
                #"{ "id": "\#(rule.id)"\#(effect), "capabilities": \#(random.jsonList(rule.capabilities)), "match": {\#(match.joined(separator: ", "))}, "requires": {\#(requires.joined(separator: ", "))} }"#
        }
        let index = random.int(0...(rules.count - 1))
        switch random.int(0...2) {
        case 0: rules.remove(at: index)
        case 1:
            rules[index] =
                rules[index].contains(#""effect": "deny""#)
                ? rules[index].replacingFirst(#", "effect": "deny""#, with: "")
                : rules[index].replacingFirst(#"", "capabilities""#, with: #"", "effect": "deny", "capabilities""#)
        default:
            rules.append(#"{ "id": "added", "effect": "deny", "capabilities": ["c1"], "match": { "role": "NONE" } }"#)
        }
        return """
            { "format": "group-policy/v1", "id": "edited", "capabilities": { "c0": "0", "c1": "1", "c2": "2" },
              "rules": [\(rules.joined(separator: ", "))] }
            """
    }

    /// Whether a concrete scenario of the brute-force space is in a row's class, an unnamed value of
    /// the row standing for any value neither policy names.
    static func contains(_ row: PolicyDiff.Row, _ scenario: Scenario, _ space: ScenarioSpace) -> Bool {
        func fits(_ pattern: String?, _ value: String, named: [String], fresh: [String]) -> Bool {
            guard let pattern else { return true }
            return fresh.contains(pattern) ? !named.contains(value) : pattern == value
        }
        let namedProducts = Array(space.slots.dropLast(2))
        guard fits(row.environment?.rawValue, scenario.environment.rawValue, named: [], fresh: []),
            fits(row.groupType, scenario.groupType.rawValue, named: space.groupTypes, fresh: [space.freshGroupType]),
            fits(
                row.groupID,
                scenario.groupID,
                named: space.groupIDs(in: scenario.environment),
                fresh: [space.freshGroupID]
            ),
            Set(row.entitlements).isSubset(of: scenario.entitlements)
        else { return false }
        // The row's entries map to distinct entries of the scenario.
        func place(_ patterns: ArraySlice<PolicyDiff.EntryPattern>, _ available: [RoleEntry]) -> Bool {
            guard let pattern = patterns.first else { return true }
            return available.indices.contains { index in
                let entry = available[index]
                var rest = available
                rest.remove(at: index)
                return fits(pattern.productID, entry.productID, named: namedProducts, fresh: space.freshProductIDs)
                    && fits(pattern.role, entry.role.rawValue, named: space.roles, fresh: [space.freshRole])
                    && place(patterns.dropFirst(), rest)
            }
        }
        return place(row.roles[...], scenario.roles)
    }
}
