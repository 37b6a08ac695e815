import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import ShadowReportReading
import Testing

@testable import GroupDecisions

/// The report's JSON: written exactly, and read back the same (its strict reading is the CLI's:
/// GroupPolicyCLITests, ShadowReportReadingTests).
@Suite("Shadow: the report's JSON")
struct ShadowReportJSONTests {
    static let report = SampleShadowReport.report

    @Test("compact JSON: the keys in order, null for what is unknown, strings escaped")
    func compact() {
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
    }

    @Test("pretty JSON, and a report without a candidate")
    func pretty() {
        let empty = ShadowReport(
            liveRevision: "49c9b1f4e538bd3a",
            candidateRevision: nil,
            since: Date(timeIntervalSince1970: 1_800_000_000),
            decisions: 0,
            changedDecisions: 0,
            dropped: 0,
            changes: []
        )
        #expect(
            empty.jsonString(pretty: true) == """
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

    @Test("read back: the same report, compact or pretty")
    func roundTrip() throws {
        #expect(try ShadowReport(jsonBytes: Self.report.jsonBytes()) == Self.report)
        #expect(try ShadowReport(jsonBytes: Self.report.jsonBytes(pretty: true)) == Self.report)
    }
}
