import Foundation
import GroupDecisionsTesting
import GroupPolicy
import GroupPolicyTestSupport
import ServingTestSupport
import ShadowReportReading
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// The report: its JSON written exactly and read back the same (its strict reading is the CLI's:
/// GroupPolicyCLITests, ShadowReportReadingTests), and its memory bound, at most 10,000 rows and
/// 16 MiB of JSON, further group-level changes counted as dropped.
@Suite("Shadow: the report's JSON, its rows and its bytes bounded")
struct ShadowReportTests {
    static let report = SampleShadowReport.report

    @Test(
        "compact JSON: the keys in order, null for what is unknown, strings escaped; read back the same, compact or pretty"
    )
    func compact() throws {
        #expect(
            Self.report.jsonString()
                == #"{"liveRevision":"49c9b1f4e538bd3a","candidateRevision":"ec499e3986364ea5","#
                + #""since":"2027-01-15T08:00:00.250Z","decisions":1200,"changedDecisions":45,"dropped":0,"#
                + #""skippedDecisions":7,"#
                + #""changes":[{"capability":"workspace.export","change":"gained","groupType":"ORGANIZATION","#
                + #""liveRules":[],"candidateRules":["admins-manage"],"liveRulesOmitted":0,"#
                + #""candidateRulesOmitted":0,"groups":41,"decisions":40,"#
                + #""examples":[{"decisionId":null,"customerHash":"3f2a","groupId":"org1"},"#
                + #"{"decisionId":"0192","customerHash":null,"groupId":"org\"2"}]},"#
                + #"{"capability":"workspace.view","change":"lost","groupType":"ORGANIZATION","#
                + #""liveRules":["members-view"],"candidateRules":["no-view-for-none"],"#
                + #""liveRulesOmitted":3,"candidateRulesOmitted":0,"groups":5,"decisions":5,"#
                + #""examples":[]}]}"#
        )
        #expect(try ShadowReport(jsonBytes: Self.report.jsonBytes()) == Self.report)
        #expect(try ShadowReport(jsonBytes: Self.report.jsonBytes(pretty: true)) == Self.report)
    }

    @Test("pretty JSON, and a report without a candidate")
    func pretty() {
        #expect(
            emptyShadowReport(liveRevision: "49c9b1f4e538bd3a").jsonString(pretty: true) == """
                {
                  "liveRevision": "49c9b1f4e538bd3a",
                  "candidateRevision": null,
                  "since": "2027-01-15T08:00:00.000Z",
                  "decisions": 0,
                  "changedDecisions": 0,
                  "dropped": 0,
                  "skippedDecisions": 0,
                  "changes": []
                }
                """
        )
    }

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
        let service = try ServiceHarness(
            source: StaticGroupsSource(answers),
            policies: try live.store(),
            candidatePolicies: try candidate.store()
        )
        .service
        try await ShadowServiceTests.serve(service, (0..<10).map { "c\($0)" })
        var report = await service.settledShadowReport()
        #expect(report.changes.count == 10_000)
        #expect(report.dropped == 0)
        // The eleventh customer's 1,000 types find no room; the first customer's find their rows.
        try await ShadowServiceTests.serve(service, ["c10", "c0"])
        report = await service.settledShadowReport()
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

    @Test(
        "the biggest report a tally makes, every string escaped at its worst, is within 16 MiB, compact or pretty",
        .cpuBound
    )
    func byteBound() throws {
        // Each byte of these names is a control character, written as six (\u0001).
        func name(_ tag: Int, length: Int = 2_000) -> String {
            "\(tag)" + String(repeating: "\u{1}", count: length)
        }
        var tally = ShadowTally(
            liveRevision: name(0, length: 64),
            candidateRevision: name(1, length: 64),
            since: Date(timeIntervalSince1970: 1_800_000_000)
        )
        // About half a megabyte a row at most: 60 rows would take twice the bound.
        let rows = 60
        for row in 0..<rows {
            let key = ShadowRowKey(
                capability: name(row),
                gained: row.isMultiple(of: 2),
                groupType: name(row),
                allLiveRules: (0..<20).map { name($0) }.sorted { ShadowReport.Change.byteOrder($0, $1) == true },
                allCandidateRules: (0..<16).map { name(100 + $0) }
            )
            for example in 0..<ShadowReport.maximumExamples {
                tally.record(
                    [ShadowTally.DecisionRow(key: key, groups: 1, firstGroupID: name(example, length: 500))],
                    omitted: 0,
                    decisionID: name(example, length: 500),
                    customerHash: name(example, length: 500)
                )
            }
        }
        var report = tally.report
        report.changes.sort(by: ShadowReport.Change.precedes)
        #expect(report.dropped > 0)
        #expect(report.changes.count < rows)
        let compact = report.jsonBytes()
        let pretty = report.jsonBytes(pretty: true)
        #expect(pretty.count <= ShadowReport.maximumReportBytes)
        #expect(compact.count <= pretty.count)
        // The account is an upper bound, not a wild one: the report fills most of it.
        #expect(pretty.count > ShadowReport.maximumReportBytes / 2)
        #expect(try ShadowReport(jsonBytes: pretty) == report)
    }
}
