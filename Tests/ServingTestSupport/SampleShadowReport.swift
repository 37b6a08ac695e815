import Foundation
package import GroupDecisions

/// A small shadow report with every kind of value (a row without a candidate rule, a row with omitted rules, examples
/// with and without ids, a quote to escape): the JSON tests write it, and the CLI's reader tests read it.
package enum SampleShadowReport {
    package static let report = ShadowReport(
        liveRevision: "49c9b1f4e538bd3a",
        candidateRevision: "ec499e3986364ea5",
        since: Date(timeIntervalSince1970: 1_800_000_000.25),
        decisions: 1200,
        changedDecisions: 45,
        dropped: 0,
        skippedDecisions: 7,
        changes: [
            ShadowReport.Change(
                capability: "workspace.export",
                direction: .gained,
                groupType: "ORGANIZATION",
                liveRules: [],
                candidateRules: ["admins-manage"],
                groups: 41,
                decisions: 40,
                examples: [
                    ShadowReport.Example(decisionID: nil, customerHash: "3f2a", groupID: "org1"),
                    ShadowReport.Example(decisionID: "0192", customerHash: nil, groupID: "org\"2"),
                ]
            ),
            ShadowReport.Change(
                capability: "workspace.view",
                direction: .lost,
                groupType: "ORGANIZATION",
                liveRules: ["members-view"],
                candidateRules: ["no-view-for-none"],
                liveRulesOmitted: 3,
                groups: 5,
                decisions: 5,
                examples: []
            ),
        ]
    )
}
