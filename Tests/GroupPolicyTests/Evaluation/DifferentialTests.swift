import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

/// The optimized evaluator (tables, bit sets, interning) against the naive reference.
///
/// Random policies, policy sets, responses and contexts; seeds are fixed, so a failure reproduces.
@Suite(.cpuBound) struct DifferentialTests {
    @Test(arguments: 0..<8)
    func optimizedEvaluationMatchesTheReference(batch: Int) throws {
        var random = RandomInputs(seed: UInt64(batch) &* 7919 &+ 17)
        for iteration in 0..<250 {
            // Mostly narrow policies, sometimes wider than one 64-bit word.
            let capabilityCount = random.chance(0.15) ? random.int(60...140) : random.int(1...8)
            let label = "batch \(batch) iteration \(iteration)"
            guard try compare(&random, capabilityCount: capabilityCount, label: label) != nil else { return }
        }
    }

    /// The paths narrow inputs rarely reach: many products (ids on both sides of the interning's
    /// 8- and 16-byte boundaries, and longer), responses of 33 to 48 groups (merged through the
    /// dictionary plan) with repeated ids, and up to 200 capabilities.
    @Test(arguments: 0..<4)
    func wideInputsMatchTheReference(batch: Int) throws {
        var random = RandomInputs(seed: UInt64(batch) &* 104_729 &+ 5)
        random.products = RandomInputs.manyProducts
        random.groupIDs = RandomInputs.manyGroupIDs
        for iteration in 0..<80 {
            let capabilityCount = random.chance(0.5) ? random.int(65...200) : random.int(1...64)
            random.groupCount = random.chance(0.5) ? 33...48 : 0...32
            let label = "wide \(batch) iteration \(iteration)"
            guard try compare(&random, capabilityCount: capabilityCount, label: label) != nil else { return }
        }
    }

    /// Group ids and product ids in two spellings `String` calls equal (precomposed "é", and "e"
    /// with a combining accent), repeated groups with conflicting types and the placeholder, in
    /// both environments: the merge and every match compare bytes, on both paths.
    @Test(arguments: 0..<4)
    func canonicallyEquivalentNamesMatchTheReference(batch: Int) throws {
        var random = RandomInputs(seed: UInt64(batch) &* 2_147_483_647 &+ 7)
        random.groupIDs = RandomInputs.groupIDs + RandomInputs.canonicallyEquivalentNames
        random.products = RandomInputs.products + RandomInputs.canonicallyEquivalentNames
        random.groupCount = 2...8
        for iteration in 0..<150 {
            let capabilityCount = random.chance(0.15) ? random.int(60...140) : random.int(1...8)
            let label = "equivalent \(batch) iteration \(iteration)"
            guard try compare(&random, capabilityCount: capabilityCount, label: label) != nil else { return }
        }
    }

    /// Policies with more distinct `requires` than the 64 the tables hold as layers: the rules past
    /// the 64th are evaluated one by one (fast path) and through the indexes (provenance).
    @Test(arguments: 0..<2)
    func manyRequirementsMatchTheReference(batch: Int) throws {
        var random = RandomInputs(seed: UInt64(batch) &* 15_485_863 &+ 3)
        random.ruleCount = 150...220
        random.requiresChance = 0.95
        random.entitlements = (0..<12).map { "e\($0)" }
        var pastTheLayers = 0
        for iteration in 0..<25 {
            let capabilityCount = random.chance(0.3) ? random.int(65...100) : random.int(1...12)
            let label = "layers \(batch) iteration \(iteration)"
            guard let policy = try compare(&random, capabilityCount: capabilityCount, label: label) else { return }
            for document in policy.compiled.documents {
                pastTheLayers += document.directRules.filter { !document.ruleConditions[$0].hasGroupIDs }.count
            }
        }
        // The point of this test: there are rules past the 64th layer.
        #expect(pastTheLayers > 100)
    }

    /// Policies compiled without the dense role-level tables (as a policy naming thousands of
    /// types, roles and products is): rules are found per entry through the product indexes.
    @Test(arguments: 0..<4)
    func sparseTablesMatchTheReference(batch: Int) throws {
        var random = RandomInputs(seed: UInt64(batch) &* 6_700_417 &+ 11)
        try CompiledDocument.$denseCellLimit.withValue(0) {
            for iteration in 0..<150 {
                let capabilityCount = random.chance(0.2) ? random.int(65...140) : random.int(1...8)
                let label = "sparse \(batch) iteration \(iteration)"
                guard let policy = try compare(&random, capabilityCount: capabilityCount, label: label) else { return }
                #expect(policy.compiled.documents.allSatisfy { !$0.hasDenseRoleTables })
            }
        }
    }

    /// One random policy (or set of two) against the reference, on a few responses and contexts.
    ///
    /// Checks the full decision and the fast path; returns the policy, or nil after the first
    /// difference.
    private func compare(_ random: inout RandomInputs, capabilityCount: Int, label: String) throws -> Policy? {
        let documentCount = random.chance(0.2) ? 2 : 1
        var documents: [PolicyDocument] = []
        for index in 0..<documentCount {
            let json = random.policyJSON(id: "policy\(index)", capabilityCount: capabilityCount, contentEvery: 5)
            documents.append(try Policy.parseDocument(bytes(json), fileName: "random.json", limits: .default))
        }
        let compiled = Policy(documents: documents)
        let reference = ReferenceEvaluator(documents: documents)
        for _ in 0..<6 {
            let response = random.response()
            let context = random.context()
            let expected = reference.evaluate(response, context)
            let actual = ReferenceEvaluator.Outcome(compiled.evaluate(response, in: context))
            #expect(actual == expected, "\(label): \(response.jsonString()) \(context)")
            let fast = compiled.capabilities(for: response, in: context)
            #expect(Set(fast.names) == expected.customer, "fast path, \(label)")
            if actual != expected || Set(fast.names) != expected.customer { return nil }
        }
        return compiled
    }

    /// Shuffling rules, groups or role entries never changes a decision (up to group order).
    ///
    /// Duplicate group ids get one type here: with conflicting types the spec makes the first
    /// occurrence's type win, so there group order matters by definition.
    @Test func shufflingNeverChangesADecision() throws {
        var random = RandomInputs(seed: 42)
        for _ in 0..<300 {
            let json = random.policyJSON(id: "p", capabilityCount: 6, contentEvery: 4)
            let document = try Policy.parseDocument(bytes(json), fileName: nil, limits: .default)
            var shuffledDocument = document
            shuffledDocument.rules.shuffle(using: &random.generator)
            let original = Policy(documents: [document])
            let shuffled = Policy(documents: [shuffledDocument])
            var response = random.response()
            var typeByID: [String: GroupType] = [:]
            for index in response.groups.indices {
                let group = response.groups[index]
                response.groups[index].groupType = typeByID[group.groupID] ?? group.groupType
                typeByID[group.groupID] = response.groups[index].groupType
            }
            var shuffledResponse = response
            shuffledResponse.groups.shuffle(using: &random.generator)
            for index in shuffledResponse.groups.indices {
                shuffledResponse.groups[index].roles.shuffle(using: &random.generator)
            }
            let context = random.context()
            let first = original.evaluate(response, in: context)
            let second = shuffled.evaluate(shuffledResponse, in: context)
            #expect(first.capabilities == second.capabilities)
            let firstGroups = Dictionary(uniqueKeysWithValues: first.groups.map { ($0.groupID, $0.capabilities) })
            let secondGroups = Dictionary(uniqueKeysWithValues: second.groups.map { ($0.groupID, $0.capabilities) })
            #expect(firstGroups == secondGroups)
            #expect(Set(first.grants) == Set(second.grants))
            #expect(Set(first.denials) == Set(second.denials))
            #expect(Set(first.workspaces) == Set(second.workspaces))
        }
    }
}
