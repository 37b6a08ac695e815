import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// The report's memory bound: at most 10,000 rows, further group-level changes counted as dropped.
@Suite("Shadow: the row bound")
struct ShadowReportBoundTests {
    /// A customer with 1,000 organization-like groups, each of its own type `T<first + n>`: under
    /// the candidate each gains `x`, a row per type.
    static func customer(types first: Int) -> GetCustomerGroupsResponse {
        GetCustomerGroupsResponse(
            groups: (0..<1_000).map { GroupEntry(groupID: "g\($0)", groupType: GroupType("T\(first + $0)")) }
        )
    }

    @Test("10,000 rows at most; the changes that would need another row are counted as dropped")
    func tenThousandRows() async throws {
        var answers: [String: GetCustomerGroupsResponse] = [:]
        for customer in 0..<11 { answers["c\(customer)"] = Self.customer(types: customer * 1_000) }
        let live = try PolicyDirectory(["p.json": policyText(capabilities: ["x"], rules: "[]")])
        let candidate = try PolicyDirectory([
            "p.json": policyText(capabilities: ["x"], rules: #"[{ "id": "everyone", "capabilities": ["x"] }]"#)
        ])
        let service = try GroupDecisionService(
            policies: try live.store(),
            source: StaticGroupsSource(answers),
            timeSource: ManualClock().timeSource,
            candidatePolicies: try candidate.store()
        )
        for customer in 0..<10 {
            _ = try await service.decision(anyTransactionID: "c\(customer)", environment: .production)
        }
        var report = service.shadowReport
        #expect(report.changes.count == 10_000)
        #expect(report.dropped == 0)
        // The eleventh customer's 1,000 types find no room; the first customer's find their rows.
        _ = try await service.decision(anyTransactionID: "c10", environment: .production)
        _ = try await service.decision(anyTransactionID: "c0", environment: .production)
        report = service.shadowReport
        #expect(report.changes.count == ShadowReport.maximumChanges)
        #expect(report.dropped == 1_000)
        #expect(report.decisions == 12)
        #expect(report.changedDecisions == 12)
        #expect(report.changes.reduce(0) { $0 + $1.groups } == 11_000)
        // The first customer's rows come first (two decisions each), then by type's bytes.
        #expect(report.changes.prefix(2).map(\.groupType) == ["T0", "T1"])
        #expect(report.changes.prefix(1_000).allSatisfy { $0.decisions == 2 && $0.examples.count == 2 })
        #expect(!report.changes.contains { $0.groupType == "T10000" })
        #expect(report.changes.last?.groupType == "T9999")
        // The bound holds through the JSON, which reads back the same.
        #expect(try ShadowReport(jsonBytes: report.jsonBytes()) == report)
    }
}
