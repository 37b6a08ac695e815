import Foundation
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy
@testable import GroupPolicyTooling

/// Rules that can never matter and capabilities no scenario receives: found exactly, and checked
/// against their definitions (removing the rule changes no capability anywhere, by `diff`; no
/// scenario of the whole space holds the capability, by brute force) for random policies.
@Suite(.cpuBound) struct RuleAnalysisTests {
    static let example = """
        { "format": "group-policy/v1", "id": "p",
          "capabilities": { "a": "A", "b": "B", "c": "C", "d": "D" },
          "rules": [
            { "id": "all", "capabilities": ["a", "b", "c"] },
            { "id": "pro", "capabilities": ["a"], "match": { "productId": "pro", "role": "*" } },
            { "id": "pro-d", "capabilities": ["d", "b"], "match": { "productId": "pro", "role": "ADMIN" } },
            { "id": "no-c", "effect": "deny", "capabilities": ["c"] },
            { "id": "no-c-admins", "effect": "deny", "capabilities": ["c"], "match": { "role": "ADMIN" } },
            { "id": "no-d-none", "effect": "deny", "capabilities": ["d"], "match": { "role": "NONE" } }
          ] }
        """

    /// Two rules and a capability that never matter, two rules that do.
    ///
    /// `pro` grants only what `all` grants; `no-c-admins` denies only where `no-c` denies; no one
    /// receives `c`. `pro-d` gives `d` to the administrators of `pro`, and `no-d-none` takes it
    /// from a group that also holds a `NONE` entry: both matter.
    @Test func aGrantADenyAndACapabilityThatNeverMatter() throws {
        let analysis = try policy(Self.example, fileName: "p.json").analyzeRules()
        #expect(analysis.skipped == nil)
        #expect(
            analysis.warnings.map(\.description) == [
                "p.json:5:5: warning: rules[1]: rule 'pro' is redundant: removing it changes no decision in any "
                    + "scenario (wherever it matches, each capability it grants is granted by another rule or denied)",
                "p.json:8:5: warning: rules[4]: rule 'no-c-admins' is redundant: removing it changes no decision in "
                    + "any scenario (wherever it matches, each capability it denies is denied by another rule or "
                    + "granted by none)",
                "p.json:2:41: warning: capabilities.c: capability 'c' is always denied: no scenario receives it "
                    + "(no rule grants it where no deny rule removes it)",
            ]
        )
        #expect(analysis.warnings.map(\.kind) == [.redundantRule, .redundantRule, .capabilityAlwaysDenied])
    }

    /// A rule the loader already warns about (it can never match, or a deny removes all it grants)
    /// is not warned about again.
    @Test func aRuleTheLoaderWarnsAboutIsNotWarnedAgain() throws {
        let loaded = try policy(
            capabilities: ["a", "b"],
            rules: #"""
                [ { "id": "consumers", "capabilities": ["a"], "match": { "groupType": "CONSUMER", "role": "ADMIN" } },
                  { "id": "b", "capabilities": ["b"] },
                  { "id": "no-b", "effect": "deny", "capabilities": ["b"] } ]
                """#
        )
        #expect(loaded.warnings.map(\.kind) == [.unreachableConsumerRule, .grantAlwaysDenied])
        // `no-b` is the only deny of `b`, which `b` grants everywhere: it matters. No one receives
        // `a` (its one rule never matches) or `b` (always denied).
        #expect(
            loaded.analyzeRules().warnings.map(\.message) == [
                "capability 'a' is always denied: no scenario receives it (no rule grants it where no deny rule "
                    + "removes it)",
                "capability 'b' is always denied: no scenario receives it (no rule grants it where no deny rule "
                    + "removes it)",
            ]
        )
    }

    @Test func theBundledPoliciesHaveNoRuleThatNeverMatters() throws {
        for file in ["Policies/team-workspace.json", "Policies/family-sharing.json"] {
            let analysis = try Policy(contentsOfFile: repositoryFile(file)).analyzeRules()
            #expect(analysis.skipped == nil, "\(file)")
            #expect(analysis.warnings.isEmpty, "\(file): \(analysis.warnings)")
        }
    }

    /// Over the budget, or the work limit, nothing is analysed and the analysis says why.
    @Test func overItsBoundsTheAnalysisSaysWhy() throws {
        let loaded = try policy(Self.example)
        #expect(
            loaded.analyzeRules(budget: 10).skipped
                == "its reduced space holds more than 10 scenarios, over the budget of 10"
        )
        #expect(loaded.analyzeRules(budget: 10).warnings.isEmpty)
        #expect(loaded.analyzeRules(workLimit: 1_000).skipped?.hasPrefix("its 75 scenarios would cost about ") == true)
    }

    /// The wide policy of the matrix's bound (10,000 capabilities, one rule granting them all, a
    /// rule per product): every product rule grants what `all` grants, so each is redundant (100
    /// are listed, then how many more), and the analysis stays within the bounds `check` has.
    @Test(arguments: [800, 1_600])
    func theWidePolicyIsAnalysedWithinTheBounds(_ products: Int) throws {
        let loaded = try policy(WideScenarioMatrixTests.wide(products: products).saved, fileName: "wide.json")
        let (analysis, cost) = StructuredInputBoundTests.measure { loaded.analyzeRules() }
        #expect(cost.seconds < StructuredInputBoundTests.seconds)
        #expect(cost.peakGrowth < StructuredInputBoundTests.bytes)
        #expect(analysis.skipped == nil)
        #expect(analysis.warnings.count == 101)
        #expect(analysis.warnings.allSatisfy { $0.kind == .redundantRule })
        #expect(analysis.warnings[99].message.hasPrefix("rule 'product-99' is redundant") == true)
        #expect(analysis.warnings[100].jsonPath == "rules[101]")
        #expect(
            analysis.warnings[100].message
                == "\(products - 100) more warnings of kind redundant-rule from here on are not listed (at most 100 "
                + "of a kind per file)"
        )
    }

    // MARK: Against the definitions

    /// The policy's JSON without its rule at `index`.
    static func without(_ index: Int, _ json: String) throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        var rules = try #require(object["rules"] as? [Any])
        rules.remove(at: index)
        object["rules"] = rules
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    /// The policy's JSON with a rule denying `capability` everywhere.
    static func denying(_ capability: String, _ json: String) throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        var rules = try #require(object["rules"] as? [Any])
        rules.append(["id": "deny-all-of-it", "effect": "deny", "capabilities": [capability]])
        object["rules"] = rules
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    /// A rule is warned about exactly when the diff of the policy without it is empty, and a
    /// capability exactly when some rule grants it and denying it everywhere changes nothing.
    static func checkAgainstTheDefinitions(_ json: String) throws {
        let loaded = try policy(json, fileName: "p.json")
        let analysis = loaded.analyzeRules()
        #expect(analysis.skipped == nil)
        let warned = Set(analysis.warnings.filter { $0.kind == .redundantRule }.map(\.jsonPath))
        let loaderWarned = Set(
            loaded.warnings.filter { $0.kind == .grantAlwaysDenied || $0.kind == .unreachableConsumerRule }
                .map(\.jsonPath)
        )
        let document = loaded.documents[0]
        for index in document.rules.indices {
            let reduced = try policy(try without(index, json), fileName: "p.json")
            let redundant = try PolicyDiff(from: loaded, to: reduced).rows.isEmpty
            let path = "rules[\(index)]"
            #expect(
                warned.contains(path) == (redundant && !loaderWarned.contains(path)),
                "\(path) redundant \(redundant) in \(json)"
            )
        }
        let alwaysDenied = Set(analysis.warnings.filter { $0.kind == .capabilityAlwaysDenied }.map(\.jsonPath))
        for capability in loaded.capabilities.map(\.name) {
            let granted = document.rules.contains { $0.effect == .grant && $0.capabilities.contains(capability) }
            let denied = try policy(try denying(capability, json), fileName: "p.json")
            let received = try !PolicyDiff(from: loaded, to: denied).rows.isEmpty
            #expect(
                alwaysDenied.contains("capabilities.\(capability)") == (granted && !received),
                "\(capability) granted \(granted), received \(received) in \(json)"
            )
        }
    }

    @Test(arguments: 0..<40)
    func smallRandomPoliciesAgreeWithTheDefinitions(_ seed: Int) throws {
        var random = RandomInputs(seed: UInt64(seed) &* 6_700_417 &+ 5)
        try Self.checkAgainstTheDefinitions(InvariantExhaustiveTests.randomPolicy(&random))
    }

    /// Larger vocabularies, sandbox aliases, the sandbox placeholder's group id, content
    /// capabilities and up to 9 rules (each checked with a diff of its own, the slow part).
    @Test(arguments: 0..<12)
    func randomPoliciesWithAliasesAgreeWithTheDefinitions(_ seed: Int) throws {
        var random = RandomInputs(seed: UInt64(seed) &* 104_723 &+ 17)
        random.ruleCount = 1...9
        try Self.checkAgainstTheDefinitions(random.policyJSON(id: "p", capabilityCount: 4, contentEvery: 3))
    }

    /// Brute force over the whole space: a capability is warned about exactly when some rule
    /// grants it and no scenario holds it.
    @Test(arguments: 0..<8)
    func alwaysDeniedAgreesWithTheWholeSpace(_ seed: Int) throws {
        var random = RandomInputs(seed: UInt64(seed) &* 15_485_863 &+ 1)
        let json = InvariantExhaustiveTests.randomPolicy(&random)
        let loaded = try policy(json)
        var received: Set<String> = []
        for scenario in InvariantExhaustiveTests.fullSpace {
            received.formUnion(loaded.capabilities(for: scenario.response, in: scenario.context).names)
        }
        let warned = loaded.analyzeRules().warnings.filter { $0.kind == .capabilityAlwaysDenied }.map(\.jsonPath)
        let granted = Set(loaded.documents[0].rules.filter { $0.effect == .grant }.flatMap(\.capabilities))
        #expect(
            warned
                == ["c0", "c1", "c2"].filter { granted.contains($0) && !received.contains($0) }.map {
                    "capabilities.\($0)"
                }
        )
    }
}
