import Foundation
import GroupDecisionsTesting
import GroupPolicy
import GroupPolicyTestSupport
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// The service's shadow report against an independent computation of the same traffic.
///
/// ``ExpectedShadowReport`` evaluates the same traffic under both policies, on random policies (single documents and sets of two, with the
/// same capabilities or different ones, narrow and wider than one 64-bit word), responses and
/// contexts. Seeds are fixed, so a failure reproduces.
@Suite("Shadow: the report against an independent computation", .heavy, .cpuBound)
struct ShadowDifferentialTests {
    @Test(arguments: 0..<6)
    func randomPoliciesAndTraffic(batch: Int) async throws {
        var random = RandomInputs(seed: UInt64(batch) &* 2_147_483_647 &+ 13)
        // Rows seen with the same catalog on both sides, and with different ones.
        var rows = (same: 0, different: 0)
        for iteration in 0..<12 {
            let label = "batch \(batch) iteration \(iteration)"
            // The same catalog on both sides half the time (the bit-for-bit comparison), otherwise
            // catalogs that differ in size (names matched one by one), sometimes past 64.
            let liveCount = random.chance(0.2) ? random.int(60...90) : random.int(1...8)
            let candidateCount = random.chance(0.5) ? liveCount : random.int(1...70)
            let live = try PolicyDirectory(documents(&random, capabilityCount: liveCount))
            let candidate = try PolicyDirectory(documents(&random, capabilityCount: candidateCount))
            let report = try await compare(live: live, candidate: candidate, random: &random, label: label)
            if liveCount == candidateCount {
                rows.same += report.changes.count
            } else {
                rows.different += report.changes.count
            }
        }
        // The point of the test: both comparisons found changes to count.
        #expect(rows.same > 10)
        #expect(rows.different > 10)
    }

    /// A candidate: the live policy with a few rules gone or reversed; most decisions unchanged, as in a real rollout.
    @Test(arguments: 0..<4)
    func nearlyIdenticalCandidates(batch: Int) async throws {
        var random = RandomInputs(seed: UInt64(batch) &* 1_000_003 &+ 7)
        random.ruleCount = 6...14
        var changedDecisions = 0
        for iteration in 0..<10 {
            let label = "near \(batch) iteration \(iteration)"
            let text = random.policyJSON(id: "p", capabilityCount: random.int(2...8), contentEvery: 5)
            // Remove a deny rule's effect (it grants instead), or make a grant rule deny.
            var changed = text
            if random.chance(0.5), text.contains(#""effect": "deny","#) {
                changed = text.replacingFirst(#""effect": "deny","#, with: "")
            } else if let grant = text.range(of: #""r[0-9]+","capabilities""#, options: .regularExpression) {
                let rule = String(text[grant]).replacingFirst(#"","#, with: #"","effect": "deny","#)
                changed = text.replacingCharacters(in: grant, with: rule)
            }
            let live = try PolicyDirectory(["p.json": text])
            let candidate = try PolicyDirectory(["p.json": changed])
            changedDecisions += try await compare(
                live: live,
                candidate: candidate,
                random: &random,
                label: label
            ).changedDecisions
        }
        #expect(changedDecisions > 10)
    }

    /// One policy, or a set of two (rule ids then read `policy/rule`).
    private func documents(_ random: inout RandomInputs, capabilityCount: Int) -> [String: String] {
        let count = random.chance(0.25) ? 2 : 1
        var files: [String: String] = [:]
        for index in 0..<count {
            files["policy\(index).json"] = random.policyJSON(
                id: "policy\(index)",
                capabilityCount: capabilityCount,
                contentEvery: 5
            )
        }
        return files
    }

    /// Serves 40 decisions for 12 customers through a service with the candidate, and checks its
    /// report against the independent computation of the same decisions.
    private func compare(
        live: PolicyDirectory,
        candidate: PolicyDirectory,
        random: inout RandomInputs,
        label: String
    ) async throws -> ShadowReport {
        let liveStore = try live.store()
        let candidateStore = try candidate.store()
        var answers: [String: GetCustomerGroupsResponse] = [:]
        for customer in 0..<12 { answers["c\(customer)"] = random.response() }
        let service = try ServiceHarness(
            source: StaticGroupsSource(answers),
            time: .system,
            policies: liveStore,
            decisionLog: try discardingDecisionLog(),
            candidatePolicies: candidateStore
        )
        .service
        var expected = ExpectedShadowReport()
        for _ in 0..<40 {
            let customer = "c\(random.int(0...11))"
            let context = random.context()
            let served = try await service.decide(customer, in: context)
            let response = try #require(answers[customer])
            expected.add(
                live: liveStore.current.evaluate(response, in: context),
                candidate: candidateStore.current.evaluate(response, in: context),
                customerHash: shadowTestHash(customer),
                decisionID: served.decisionID
            )
            #expect(
                served.decision.jsonString(includingProvenance: true)
                    == liveStore.current.evaluate(response, in: context).jsonString(includingProvenance: true),
                "\(label): the served decision is the live policy's"
            )
        }
        let report = await service.settledShadowReport()
        let want = expected.report(
            liveRevision: liveStore.revision,
            candidateRevision: candidateStore.revision,
            since: report.since
        )
        #expect(report == want, "\(label)")
        return report
    }
}
