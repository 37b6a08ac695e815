import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

/// The explanation against a naive reference written from its rules, and against the decision.
///
/// Random policies, policy sets, responses, contexts and capabilities; seeds are fixed, so a
/// failure reproduces.
@Suite(.cpuBound) struct ExplanationDifferentialTests {
    @Test(arguments: 0..<8)
    func explanationsMatchTheReference(batch: Int) throws {
        var random = RandomInputs(seed: UInt64(batch) &* 48_611 &+ 29)
        try compare(&random, batch: batch)
    }

    /// Group ids and product ids in two spellings `String` calls equal: two groups and two
    /// products to the explanation, as to the decision.
    @Test(arguments: 0..<4)
    func canonicallyEquivalentNamesMatchTheReference(batch: Int) throws {
        var random = RandomInputs(seed: UInt64(batch) &* 7_368_787 &+ 13)
        random.groupIDs = RandomInputs.groupIDs + RandomInputs.canonicallyEquivalentNames
        random.products = RandomInputs.products + RandomInputs.canonicallyEquivalentNames
        try compare(&random, batch: batch)
    }

    private func compare(_ random: inout RandomInputs, batch: Int) throws {
        var explained = 0
        var outcomes: [Explanation.Group.Outcome: Int] = [:]
        for iteration in 0..<120 {
            let capabilityCount = random.int(1...8)
            let documentCount = random.chance(0.25) ? random.int(2...3) : 1
            var documents: [PolicyDocument] = []
            for index in 0..<documentCount {
                let json = random.policyJSON(id: "policy\(index)", capabilityCount: capabilityCount, contentEvery: 5)
                documents.append(try Policy.parseDocument(bytes(json), fileName: "random.json", limits: .default))
            }
            let policy = Policy(documents: documents)
            let reference = ReferenceExplainer(documents: documents)
            for _ in 0..<8 {
                let response = random.response()
                let context = random.context()
                let capability = "c\(random.int(0...(capabilityCount - 1)))"
                let group = random.chance(0.2) ? response.groups.first?.groupID : nil
                let label = "batch \(batch) iteration \(iteration): \(capability) \(response.jsonString()) \(context)"

                let explanation = try policy.explain(Capability(capability), for: response, in: context, group: group)
                let expected = reference.explainJSON(capability, response, context, group: group)
                let actual = explanation.jsonString(pretty: false)
                #expect(actual.isSameBytes(expected), "\(label)")
                #expect(agreesWithTheDecision(explanation, policy.evaluate(response, in: context)), "\(label)")
                if !actual.isSameBytes(expected) { return }
                explained += 1
                for group in explanation.groups { outcomes[group.outcome, default: 0] += 1 }
            }
        }
        // The inputs reach every outcome, many times.
        #expect(explained == 960)
        for outcome in Explanation.Group.Outcome.allCases { #expect(outcomes[outcome, default: 0] > 20, "\(outcome)") }
    }

    /// Outcomes, grants and denials as the decision has them for that capability and group, compared
    /// by bytes.
    private func agreesWithTheDecision(_ explanation: Explanation, _ decision: Decision) -> Bool {
        let name = explanation.capability.name
        func exact(_ grants: [Grant]) -> [ExactString] {
            grants.map {
                ExactString(
                    [
                        $0.capability, $0.groupID, $0.rule, $0.productID ?? "-", $0.role?.rawValue ?? "-",
                        $0.sandboxProductID ?? "-",
                    ].joined(separator: "|")
                )
            }
        }
        func exact(_ denials: [Denial]) -> [ExactString] {
            denials.map { ExactString([$0.capability, $0.groupID, $0.rule].joined(separator: "|")) }
        }
        return explanation.groups.allSatisfy { group in
            let grants = decision.grants.filter { $0.capability == name && $0.groupID.isSameBytes(group.groupID) }
            let denials = decision.denials.filter { $0.capability == name && $0.groupID.isSameBytes(group.groupID) }
            let allowed = decision.allows(explanation.capability, inGroup: group.groupID)
            switch group.outcome {
            case .granted:
                return allowed && exact(grants) == exact(group.grants) && denials.isEmpty && group.denials.isEmpty
            case .denied:
                return !allowed && grants.isEmpty && exact(denials) == exact(group.denials) && !group.grants.isEmpty
            case .notGranted, .ignored: return !allowed && grants.isEmpty && denials.isEmpty
            }
        }
    }
}
