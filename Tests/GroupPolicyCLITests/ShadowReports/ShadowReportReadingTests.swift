import Foundation
import GroupDecisions
import ServingTestSupport
import Testing

@testable import ShadowReportReading
@testable import group_policy

/// `group-policy shadow`'s reader: a report read back strictly, every problem one located line.
@Suite("Shadow: the CLI reads a report strictly")
struct ShadowReportReadingTests {
    @Test("the same report, compact or pretty, as the tree reader reads it")
    func roundTrip() throws {
        let report = SampleShadowReport.report
        #expect(try ShadowReport(jsonBytes: report.jsonBytes()) == report)
        #expect(try ShadowReport(jsonBytes: report.jsonBytes(pretty: true)) == report)
        #expect(try TreeShadowReportReader.read(report.jsonBytes(pretty: true)) == report)
    }

    @Test("the reader takes four times the largest report a service writes")
    func limit() {
        #expect(ShadowReport.maximumReportBytes * 4 == ShadowReport.maximumJSONBytes)
    }

    @Test("a report written before the omitted and skipped counts reads them as 0")
    func omittedCountsAbsent() throws {
        let old = SampleShadowReport.report.jsonString()
            .replacingOccurrences(of: #","liveRulesOmitted":3"#, with: "")
            .replacingOccurrences(of: #","liveRulesOmitted":0"#, with: "")
            .replacingOccurrences(of: #","candidateRulesOmitted":0"#, with: "")
            .replacingOccurrences(of: #","skippedDecisions":7"#, with: "")
        #expect(!old.contains("Omitted") && !old.contains("skipped"))
        var expected = SampleShadowReport.report
        expected.changes[1].liveRulesOmitted = 0
        expected.skippedDecisions = 0
        #expect(try ShadowReport(jsonBytes: Array(old.utf8)) == expected)
    }

    @Test(
        "every problem is one line with its place",
        arguments: [
            (
                (#","dropped":0"#, #","dropped":0,"extra":1"#),
                #"r.json:1:161: extra: unknown key 'extra'; allowed: liveRevision, candidateRevision, since, decisions, changedDecisions, dropped, skippedDecisions, changes"#
            ),
            (
                (#""groups":41"#, #""groups":"41""#),
                #"r.json:1:377: changes[0].groups: expected a whole number of at least 1 and at most 18 digits, found a string"#
            ),
            (
                (#""groups":41"#, #""groups":4.5"#),
                #"r.json:1:377: changes[0].groups: expected a whole number of at least 1 and at most 18 digits, found 4.5"#
            ),
            (
                (#","dropped":0"#, ""),
                #"r.json:1:1: dropped: missing required key 'dropped'"#
            ),
            (
                (#""change":"gained""#, #""change":"added""#),
                #"r.json:1:235: changes[0].change: unknown change 'added' (gained or lost)"#
            ),
            (
                (#""since":"2027-01-15T08:00:00.250Z""#, #""since":"2027-02-30T08:00:00.250Z""#),
                #"r.json:1:83: since: expected an instant such as 2026-11-30T19:00:00.123Z (UTC, with milliseconds), found '2027-02-30T08:00:00.250Z'"#
            ),
            (
                (#""liveRules":["members-view"]"#, #""liveRules":["z","members-view"]"#),
                #"r.json:1:620: changes[1].liveRules[1]: rule ids must be sorted by their bytes, each once: 'members-view' follows 'z'"#
            ),
            (
                (#""changedDecisions":45"#, #""changedDecisions":1201"#),
                #"r.json:1:146: changedDecisions: 1201 changed decisions of 1200 compared"#
            ),
            (
                (#""decisions":40"#, #""decisions":42"#),
                #"r.json:1:392: changes[0].decisions: 42 decisions with the change in 41 groups"#
            ),
            (
                (#""customerHash":"3f2a""#, #""customerHash":7"#),
                #"r.json:1:441: changes[0].examples[0].customerHash: expected a string or null, found a number"#
            ),
            (
                (#""candidateRevision":"ec499e3986364ea5""#, #""candidateRevision":null"#),
                #"r.json:1:108: decisions: 1200 decisions compared without a candidate (candidateRevision is null)"#
            ),
            (
                (#""liveRulesOmitted":3"#, #""liveRulesOmitted":-3"#),
                #"r.json:1:689: changes[1].liveRulesOmitted: expected a whole number of at least 0 and at most 18 digits, found -3"#
            ),
            (
                ("]}]}", "]}]"),
                #"r.json:1:757: $: invalid JSON: expected ',' or '}', found end of input"#
            ),
        ]
    )
    func strictErrors(change: (target: String, replacement: String), message: String) {
        let original = SampleShadowReport.report.jsonString()
        let input = original.replacingOccurrences(of: change.target, with: change.replacement)
        #expect(input != original)
        do {
            let report = try ShadowReport(jsonBytes: Array(input.utf8), fileName: "r.json")
            Issue.record("read \(report)")
        } catch {
            #expect(error.message == message)
        }
    }

    @Test("a duplicate row, more than 10,000 rows and more than 5 examples are refused")
    func structuralLimits() throws {
        var twice = SampleShadowReport.report
        twice.changes.append(SampleShadowReport.report.changes[1])
        var many = SampleShadowReport.report
        many.changes = (0...ShadowReport.maximumChanges).map { index in
            ShadowReport.Change(
                capability: "c\(index)",
                direction: .lost,
                groupType: "T",
                liveRules: [],
                candidateRules: [],
                groups: 1,
                decisions: 1,
                examples: []
            )
        }
        do {
            _ = try ShadowReport(jsonBytes: many.jsonBytes(), fileName: "many.json")
            Issue.record("read a report of 10,001 rows")
        } catch {
            #expect(error.message.hasSuffix("changes[10000]: more than 10000 changes is over the limit of a report"))
        }
        var examples = SampleShadowReport.report
        examples.changes[0].examples = Array(
            repeating: ShadowReport.Example(decisionID: nil, customerHash: nil, groupID: "g"),
            count: 6
        )
        do {
            _ = try ShadowReport(jsonBytes: examples.jsonBytes(), fileName: "e.json")
            Issue.record("read a row of 6 examples")
        } catch {
            #expect(error.message.hasSuffix("changes[0].examples[5]: more than 5 examples in a change"))
        }
        do {
            _ = try ShadowReport(jsonBytes: twice.jsonBytes(), fileName: "t.json")
            Issue.record("read a report with a row twice")
        } catch {
            #expect(
                error.message.hasSuffix(
                    "changes[2]: the same change as changes[1] (capability, change, groupType and rules)"
                )
            )
        }
    }
}
