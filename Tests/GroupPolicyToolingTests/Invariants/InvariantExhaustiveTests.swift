import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy
@testable import GroupPolicyTooling

/// The reduced enumeration against brute force over the *whole* space (every assignment of a role
/// or no entry to each product, every subset of entitlements), for random small policies: an
/// invariant is violated in one exactly when it is violated in the other.
@Suite(.cpuBound) struct InvariantExhaustiveTests {
    static let types = ["ORGANIZATION", "CONSUMER", "ENTERPRISE", "BRUTE_TYPE"]
    static let groupIDs = ["g0", "g1", "brute-group"]
    /// p0 and p1 may be named by the policies; q0 and q1 never are.
    static let products = ["p0", "p1", "q0", "q1"]
    static let roles = ["ADMIN", "NONE", "MEMBER", "BRUTE_ROLE"]
    static let entitlementSubsets: [[String]] = [[], ["e0"], ["e1"], ["e0", "e1"]]

    /// Every scenario of the full space (the unnamed values stand for any value no policy names).
    static let fullSpace: [Scenario] = {
        var scenarios: [Scenario] = []
        var assignments: [[RoleEntry]] = [[]]
        for product in products {
            assignments = assignments.flatMap { partial in
                [partial] + roles.map { partial + [RoleEntry(productID: product, role: Role($0))] }
            }
        }
        for environment in StoreEnvironment.allCases {
            let ids = groupIDs + (environment == .sandbox ? ["900000000000000000"] : [])
            for type in types {
                for id in ids {
                    for entitlements in entitlementSubsets {
                        for roles in type == "CONSUMER" ? [[]] : assignments {
                            scenarios.append(
                                Scenario(
                                    environment: environment,
                                    groupID: id,
                                    groupType: GroupType(type),
                                    roles: roles,
                                    entitlements: entitlements
                                )
                            )
                        }
                    }
                }
            }
        }
        return scenarios
    }()

    /// Straight from section 6: the match holds for the group (some entry for a role-level one) and
    /// the requirements hold in the context.
    static func covers(_ invariant: InvariantDefinition, _ scenario: Scenario) -> Bool {
        func holds(_ condition: ValueCondition?, _ value: String) -> Bool {
            switch condition {
            case nil, .any?: true
            case .oneOf(let values)?: values.contains(value)
            }
        }
        let match = invariant.match
        guard holds(match.groupTypes, scenario.groupType.rawValue), holds(match.groupIDs, scenario.groupID) else {
            return false
        }
        if match.productIDs != nil || match.roles != nil {
            guard
                scenario.roles.contains(where: {
                    holds(match.productIDs, $0.productID) && holds(match.roles, $0.role.rawValue)
                })
            else { return false }
        }
        if let environments = invariant.requires.environments, !environments.contains(scenario.environment) {
            return false
        }
        return invariant.requires.entitlements.allSatisfy(scenario.entitlements.contains)
    }

    static func violates(_ invariant: InvariantDefinition, _ scenario: Scenario, _ policy: Policy) -> Bool {
        guard covers(invariant, scenario) else { return false }
        // One group: the customer's capabilities are the group's.
        let capabilities = policy.capabilities(for: scenario.response, in: scenario.context)
        let has = invariant.capabilities.map { capabilities.contains($0) }
        return invariant.quantifier == .never ? has.contains(true) : has.contains(false)
    }

    static func randomPolicy(_ random: inout RandomInputs) -> String {
        func condition(_ pool: [String], wildcard: Bool) -> String {
            if wildcard && random.chance(0.2) { return "\"*\"" }
            return random.chance(0.5) ? "\"\(random.pick(pool))\"" : random.jsonList(random.subset(pool))
        }
        func match() -> String {
            var parts: [String] = []
            if random.chance(0.3) {
                parts.append(
                    #""groupType": \#(condition(["ORGANIZATION", "CONSUMER", "ENTERPRISE"], wildcard: false))"#
                )
            }
            if random.chance(0.15) { parts.append(#""groupId": \#(condition(["g0", "g1"], wildcard: false))"#) }
            if random.chance(0.5) { parts.append(#""productId": \#(condition(["p0", "p1"], wildcard: true))"#) }
            if random.chance(0.5) {
                parts.append(#""role": \#(condition(["ADMIN", "NONE", "MEMBER"], wildcard: true))"#)
            }
            return parts.isEmpty ? "" : #", "match": {\#(parts.joined(separator: ", "))}"#
        }
        func requires() -> String {
            var parts: [String] = []
            if random.chance(0.25) {
                parts.append(#""environment": \#(condition(["Production", "Sandbox"], wildcard: false))"#)
            }
            if random.chance(0.35) {
                parts.append(#""entitlements": \#(random.jsonList(random.subset(["e0", "e1"])))"#)
            }
            return parts.isEmpty ? "" : #", "requires": {\#(parts.joined(separator: ", "))}"#
        }
        let capabilities = ["c0", "c1", "c2"]
        let rules = (0..<random.int(1...6)).map { index in
            let effect = random.chance(0.35) ? #", "effect": "deny""# : ""
            return
                #"{ "id": "r\#(index)"\#(effect), "capabilities": \#(random.jsonList(random.subset(capabilities)))\#(match())\#(requires()) }"#
        }
        let invariants = (0..<random.int(1...3)).map { index in
            let quantifier = random.chance(0.5) ? "never" : "always"
            return
                #"{ "id": "i\#(index)", "\#(quantifier)": { "capabilities": \#(random.jsonList(random.subset(capabilities)))\#(match())\#(requires()) } }"#
        }
        return """
            { "format": "group-policy/v1", "id": "random", "capabilities": { "c0": "0", "c1": "1", "c2": "2" },
              "rules": [\(rules.joined(separator: ", "))], "invariants": [\(invariants.joined(separator: ", "))] }
            """
    }

    @Test(arguments: 0..<24)
    func theReducedSpaceFindsAViolationExactlyWhenTheFullSpaceHasOne(_ seed: Int) throws {
        var random = RandomInputs(seed: UInt64(seed) &* 7919 &+ 11)
        let json = Self.randomPolicy(&random)
        let loaded = try policy(json)
        let invariants = loaded.compiled.documents[0].document.invariants
        let results = loaded.checkInvariants()
        #expect(results.count == invariants.count)
        for (invariant, result) in zip(invariants, results) {
            let bruteForce = Self.fullSpace.first { Self.violates(invariant, $0, loaded) }
            #expect(
                (result.status == .violated) == (bruteForce != nil),
                "\(invariant.id) of \(json): reduced \(result.status), brute force \(bruteForce.map { "\($0)" } ?? "none")"
            )
            if let counterexample = result.counterexample {
                #expect(
                    Self.violates(invariant, counterexample, loaded),
                    "\(invariant.id): \(counterexample) of \(json)"
                )
                #expect(counterexample.roles.count <= 2)
            }
        }
    }
}
