import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy
@testable import GroupPolicyTooling

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The DocC article "The scenario space": invariants hold, or fail with a counterexample that
/// really breaks them, or fail for being over budget; never a silent pass.
@Suite struct InvariantTests {
    @Test(arguments: [("Policies/team-workspace.json", 5), ("Policies/family-sharing.json", 4)])
    func theBundledInvariantsHold(_ file: String, _ count: Int) throws {
        let results = try Policy(contentsOfFile: repositoryFile(file)).checkInvariants()
        #expect(results.count == count)
        for result in results {
            #expect(result.status == .holds, "\(result.invariantID): \(result.diagnostic.map { "\($0)" } ?? "")")
            #expect(result.scenarioCount > 0)
        }
    }

    static let consumerPolicy = """
        { "format": "group-policy/v1", "id": "p", "capabilities": { "a": "A" },
          "rules": [ { "id": "r", "match": { "groupType": "ORGANIZATION" }, "capabilities": ["a"] } ],
          "invariants": [ { "id": "i", "never": { "capabilities": ["a"], "match": { "groupType": "CONSUMER" } } } ] }
        """

    @Test func aHoldingInvariantCountsItsScenarios() throws {
        let results = try policy(Self.consumerPolicy).checkInvariants()
        // A group-level invariant on CONSUMER: one entry-less scenario per group id, one in
        // Production (the unnamed id) and two in Sandbox (plus the placeholder).
        #expect(results.map(\.status) == [.holds])
        #expect(results.first?.scenarioCount == 3)
        #expect(results.first?.diagnostic == nil)
    }

    @Test func aSpaceOverTheBudgetFailsInsteadOfPassing() throws {
        let results = try policy(Self.consumerPolicy).checkInvariants(budget: 2)
        #expect(results.map(\.status) == [.overBudget])
        #expect(results.first?.counterexample == nil)
        // The invariant's object starts on line 3, column 19.
        #expect(
            results.first?.diagnostic?.description
                == "test.json:3:19: error: invariants[0]: invariant 'i' was not checked: its scenario space holds 3 scenarios, over the budget of 2"
        )
    }

    /// Covered by an `ADMIN` entry of `pro`, granted through a `NONE` entry of another product:
    /// the counterexample needs two role entries.
    static let adminSeesNothing = """
        { "format": "group-policy/v1", "id": "p", "capabilities": { "c": "C" },
          "rules": [ { "id": "r", "match": { "productId": "*", "role": "NONE" }, "capabilities": ["c"] } ],
          "invariants": [ { "id": "admins-never-c", "never": { "capabilities": ["c"], "match": { "productId": "pro", "role": "ADMIN" } } } ] }
        """

    /// The contract's space has one unnamed product: a group holding two products no policy names,
    /// one as `ADMIN` and one as `NONE`, is outside it, so this invariant holds over the space
    /// (a documented limit) although such a customer would see `c`.
    @Test func twoUnnamedProductsAtOnceAreOutsideTheSpace() throws {
        let unnamed = """
            { "format": "group-policy/v1", "id": "p", "capabilities": { "c": "C" },
              "rules": [ { "id": "r", "match": { "productId": "*", "role": "NONE" }, "capabilities": ["c"] } ],
              "invariants": [ { "id": "admins-never-c", "never": { "capabilities": ["c"], "match": { "role": "ADMIN" } } } ] }
            """
        let loaded = try policy(unnamed)
        #expect(loaded.checkInvariants().map(\.status) == [.holds])
        let twoProducts = GetCustomerGroupsResponse(groups: [
            GroupEntry(
                groupID: "g",
                groupType: .organization,
                roles: [RoleEntry(productID: "x", role: .admin), RoleEntry(productID: "y", role: .unassigned)]
            )
        ])
        #expect(loaded.evaluate(twoProducts).allows("c"))
    }

    @Test func aViolatedNeverGivesACounterexampleThatReallyViolatesIt() throws {
        let loaded = try policy(Self.adminSeesNothing)
        let result = try #require(loaded.checkInvariants().first)
        #expect(result.status == .violated)
        let counterexample = try #require(result.counterexample)
        #expect(
            counterexample
                == Scenario(
                    environment: .production,
                    groupID: "unnamed-group",
                    groupType: .organization,
                    roles: [
                        RoleEntry(productID: "pro", role: .admin),
                        RoleEntry(productID: "unnamed.product", role: .unassigned),
                    ]
                )
        )
        #expect(result.offendingCapabilities == ["c"])
        // Evaluated, the scenario is covered (an ADMIN entry) and the group has 'c'.
        let decision = loaded.evaluate(counterexample.response, in: counterexample.context)
        #expect(counterexample.roles.contains { $0.role == .admin })
        #expect(decision.groups.first?.capabilities.contains("c") == true)
        #expect(
            result.diagnostic?.description
                == "test.json:3:19: error: invariants[0]: invariant 'admins-never-c' does not hold: 'c' is granted in Production, ORGANIZATION group 'unnamed-group', roles [pro: ADMIN, unnamed.product: NONE], entitlements []"
        )
    }

    @Test func theCounterexampleIsATestCaseThatFailsUntilThePolicyIsFixed() throws {
        let directory = try makeTemporaryDirectory("counterexample")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(
            FileManager.default.createFile(atPath: directory + "/p.json", contents: Data(Self.adminSeesNothing.utf8))
        )
        let result = try #require(try policy(Self.adminSeesNothing).checkInvariants().first)
        let testCase = try #require(result.counterexampleTestCase)
        #expect(
            testCase == """
                {
                  "name": "counterexample to invariant 'admins-never-c'",
                  "context": {"environment":"Production","entitlements":[]},
                  "response": {"groups":[{"groupId":"unnamed-group","groupType":"ORGANIZATION","roles":[{"productId":"pro","role":"ADMIN"},{"productId":"unnamed.product","role":"NONE"}]}]},
                  "expect": {"excludes":["c"]}
                }
                """
        )
        let file = #"{ "format": "group-policy-tests/v1", "policy": "p.json", "cases": [ "# + testCase + " ] }"
        let suite = try PolicyTestSuite(jsonBytes: bytes(file), fileName: directory + "/p.tests.json")
        #expect(
            suite.run().map(\.failures) == [
                ["excludes: expected 'c' not to be granted, but it is (granted by 'r' in group unnamed-group)"]
            ]
        )
    }

    @Test func aViolatedAlwaysFindsTheDenyWitnessAndItsEntitlements() throws {
        let loaded = try policy(
            """
            { "format": "group-policy/v1", "id": "p", "capabilities": { "v": "V" },
              "rules": [
                { "id": "view", "match": { "productId": "pro" }, "capabilities": ["v"] },
                { "id": "hide", "effect": "deny", "match": { "productId": "plus", "role": "NONE" },
                  "requires": { "entitlements": ["e"] }, "capabilities": ["v"] } ],
              "invariants": [ { "id": "pro-admins-view",
                "always": { "capabilities": ["v"], "match": { "productId": "pro", "role": "ADMIN" } } } ] }
            """
        )
        let result = try #require(loaded.checkInvariants().first)
        #expect(result.status == .violated)
        let counterexample = try #require(result.counterexample)
        #expect(
            counterexample
                == Scenario(
                    environment: .production,
                    groupID: "unnamed-group",
                    groupType: .organization,
                    roles: [
                        RoleEntry(productID: "plus", role: .unassigned), RoleEntry(productID: "pro", role: .admin),
                    ],
                    entitlements: ["e"]
                )
        )
        #expect(result.offendingCapabilities == ["v"])
        let decision = loaded.evaluate(counterexample.response, in: counterexample.context)
        #expect(decision.groups.first?.capabilities.contains("v") == false)
        #expect(decision.denials.map(\.rule) == ["hide"])
        #expect(result.counterexampleTestCase?.contains(#""expect": {"includes":["v"]}"#) == true)
    }

    @Test func sandboxAliasesAreOneProductWithTheirTarget() throws {
        // In the sandbox, 'example.productId.one' is 'pro': a scenario never holds both, and the
        // deny on the alias source (which no sandbox entry can reach) cannot break the invariant.
        let loaded = try policy(
            """
            { "format": "group-policy/v1", "id": "p", "capabilities": { "v": "V" },
              "rules": [
                { "id": "view", "match": { "productId": "pro" }, "capabilities": ["v"] },
                { "id": "hide", "effect": "deny", "match": { "productId": "example.productId.one" },
                  "requires": { "environment": "Sandbox" }, "capabilities": ["v"] } ],
              "sandbox": { "productAliases": { "example.productId.one": "pro" } },
              "invariants": [ { "id": "pro-views", "always": { "capabilities": ["v"], "match": { "productId": "pro" } } } ] }
            """
        )
        #expect(loaded.checkInvariants().map(\.status) == [.holds])
    }
}

@Suite struct EntrySelectionTests {
    /// The count used for budgets is the number of entry sets the enumeration visits, whatever
    /// the overlap of the two pair sides.
    @Test(arguments: 0..<20)
    func countMatchesTheEnumeration(_ seed: Int) {
        var random = RandomInputs(seed: UInt64(seed) &+ 99)
        let candidates = (0..<12).map { index in
            ScenarioSpace.Candidate(
                slot: index / 3,
                entry: RoleEntry(productID: "p\(index / 3)", role: Role("r\(index % 3)"))
            )
        }
        let indices = Array(0..<12)
        let selection = EntrySelection(
            includesEmpty: random.chance(0.5),
            singles: indices.filter { _ in random.chance(0.5) },
            pairFirst: indices.filter { _ in random.chance(0.5) },
            pairSecond: indices.filter { _ in random.chance(0.5) }
        )
        var visited: [[Int]] = []
        selection.forEach(candidates) { entries in
            visited.append(entries)
            return true
        }
        #expect(selection.count(candidates) == visited.count)
        #expect(Set(visited).count == visited.count)
        #expect(visited.allSatisfy { $0.count < 2 || candidates[$0[0]].slot != candidates[$0[1]].slot })
    }
}
