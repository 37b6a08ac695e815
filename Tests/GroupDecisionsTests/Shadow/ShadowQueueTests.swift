import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import ShadowReportReading
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// Comparing with a candidate never delays the served answer: decisions are queued, a bounded
/// queue drops and counts, and one decision's comparison looks at a bounded number of changes.
@Suite("Shadow: off the request path, bounded")
struct ShadowQueueTests {
    /// 1,000 capabilities `c000`…`c999`; live: `rules` rules each granting them all; candidate: none granted.
    static func wide(rules: Int) throws -> (live: PolicyDirectory, candidate: PolicyDirectory) {
        let names = (0..<1_000).map { "c" + String(1_000 + $0).dropFirst() }
        let list = names.map { "\"\($0)\"" }.joined(separator: ", ")
        let granting = (0..<rules).map { #"{ "id": "r\#($0)", "capabilities": [\#(list)] }"# }
        return (
            try PolicyDirectory([
                "p.json": policyText(capabilities: names, rules: "[\(granting.joined(separator: ", "))]")
            ]),
            try PolicyDirectory(["p.json": policyText(capabilities: names, rules: "[]")])
        )
    }

    /// `count` groups `g0`… of type ORGANIZATION.
    static func groups(_ count: Int) -> GetCustomerGroupsResponse {
        GetCustomerGroupsResponse(
            groups: (0..<count).map { GroupEntry(groupID: "g\($0)", groupType: .organization) }
        )
    }

    @Test("a decision is served while its comparison is held; a full queue skips and counts exactly")
    func servedWhileHeldAndSkippedWhenFull() async throws {
        let fixture = try ShadowServiceTests()
        let service = try fixture.service()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        service.shadow.beforeComparison.withLock { hook in
            hook = {
                entered.signal()
                release.wait()
            }
        }
        // The first decision is served while the worker holds its comparison.
        _ = try await service.decision(anyTransactionID: "admin", environment: .production)
        try await offCooperativePool { entered.wait() }
        #expect(service.shadowReport.decisions == 0)
        // The queue takes 1,000 more; the 7 after are served, not compared, and counted.
        try await ShadowServiceTests.serve(service, Array(repeating: "admin", count: 1_007))
        #expect(service.shadowReport.skippedDecisions == 7)
        service.shadow.beforeComparison.withLock { $0 = nil }
        release.signal()
        let report = await service.settledShadowReport()
        #expect(report.decisions == 1_001)
        #expect(report.skippedDecisions == 7)
        #expect(report.changedDecisions == 1_001)
    }

    @Test("1,000 groups losing 1,000 capabilities: 1,000 changes looked at, the rest dropped, 16 rules listed")
    func oneDecisionsWorkIsBounded() async throws {
        let (live, candidate) = try Self.wide(rules: 20)
        let service = try ServiceHarness(
            source: StaticGroupsSource(["big": Self.groups(1_000)]),
            policies: try live.store(),
            candidatePolicies: try candidate.store()
        )
        .service
        let served = try await service.decision(anyTransactionID: "big", environment: .production)
        #expect(served.decision.groups.count == 1_000)
        let report = await service.settledShadowReport()
        #expect(report.decisions == 1)
        #expect(report.changedDecisions == 1)
        // The first 1,000 changes in the comparison's order: group g0's 1,000 capabilities.
        #expect(report.changes.count == ShadowReport.maximumChangesPerDecision)
        #expect(report.dropped == 1_000 * 1_000 - 1_000)
        // The first 16 rule ids by their bytes: r0, r1, r10 … r19, r2, r3; r4 … r9 are counted.
        let expected = ["r0", "r1"] + (10..<20).map { "r\($0)" } + ["r2", "r3", "r4", "r5"]
        for change in report.changes {
            #expect(change.direction == .lost)
            #expect(change.groups == 1 && change.decisions == 1)
            #expect(change.liveRules == expected)
            #expect(change.liveRulesOmitted == 4)
            #expect(change.candidateRules.isEmpty && change.candidateRulesOmitted == 0)
            #expect(change.examples.map(\.groupID) == ["g0"])
        }
        let json = service.shadowReportJSON(pretty: true)
        #expect(try ShadowReport(jsonBytes: json) == report)
    }

    @Test("readers of an unchanged report share one serialization; a decision makes the next reader serialize")
    func serializedOncePerChange() async throws {
        let fixture = try ShadowServiceTests()
        let service = try fixture.service()
        _ = try await service.decision(anyTransactionID: "admin", environment: .production)
        await service.waitForShadowComparisons()
        let readers = await withTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<16 { group.addTask { service.shadowReportJSON() } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(readers).count == 1)
        #expect(service.shadow.serialized.withLock { $0.serializations } == 1)
        #expect(readers.first == service.shadowReport.jsonBytes())
        _ = try await service.decision(anyTransactionID: "seat", environment: .production)
        await service.waitForShadowComparisons()
        _ = service.shadowReportJSON()
        _ = service.shadowReportJSON()
        #expect(service.shadow.serialized.withLock { $0.serializations } == 2)
        // A pretty reader is another serialization; a reset is a change.
        _ = service.shadowReportJSON(pretty: true)
        service.resetShadowReport()
        _ = service.shadowReportJSON(pretty: true)
        #expect(service.shadow.serialized.withLock { $0.serializations } == 4)
    }
}
