import Foundation
import GroupPolicy

/// The counts a shadow accumulates for one pair of policy revisions, under the shadow's lock; each
/// row and example adds the most bytes its JSON can take, and one that would take the report past
/// ``ShadowReport/maximumReportBytes`` is counted in `dropped` instead (an example is left out).
struct ShadowTally {
    /// One decision's changes of one row: how many groups had it, and the first of them.
    struct DecisionRow {
        var key: ShadowRowKey
        var groups: Int
        var firstGroupID: String
    }

    let liveRevision: String
    let candidateRevision: String?
    let since: Date
    /// Moves with every change of the counts, so that a report serialized at one version is the
    /// report of that version.
    private(set) var version = 0
    private var decisions = 0
    private var changedDecisions = 0
    private var dropped = 0
    private var skipped = 0
    /// The most bytes the report's JSON takes so far.
    private(set) var bytesAtMost: Int
    private var rowIndex: [ShadowRowKey: Int] = [:]
    private var rows: [ShadowReport.Change] = []

    init(liveRevision: String, candidateRevision: String?, since: Date) {
        self.liveRevision = liveRevision
        self.candidateRevision = candidateRevision
        self.since = since
        bytesAtMost = 600 + 6 * (liveRevision.utf8.count + (candidateRevision?.utf8.count ?? 0))
    }

    /// Whether decisions made with these revisions count here.
    func counts(live: String, candidate: String) -> Bool {
        liveRevision == live && candidateRevision == candidate
    }

    /// Counts one decision compared, with its changes grouped by row, and `omitted` group-level
    /// changes beyond what one decision's comparison looks at.
    mutating func record(_ changes: [DecisionRow], omitted: Int, decisionID: String?, customerHash: String?) {
        version += 1
        decisions += 1
        dropped += omitted
        guard !changes.isEmpty || omitted > 0 else { return }
        changedDecisions += 1
        let limit = ShadowReport.maximumReportBytes
        for change in changes {
            let example = ShadowReport.Example(
                decisionID: decisionID,
                customerHash: customerHash,
                groupID: change.firstGroupID
            )
            if let index = rowIndex[change.key] {
                rows[index].groups += change.groups
                rows[index].decisions += 1
                if rows[index].examples.count < ShadowReport.maximumExamples,
                    bytesAtMost + example.jsonBytesAtMost <= limit
                {
                    rows[index].examples.append(example)
                    bytesAtMost += example.jsonBytesAtMost
                }
            } else if rows.count < ShadowReport.maximumChanges,
                bytesAtMost + change.key.jsonBytesAtMost + example.jsonBytesAtMost <= limit
            {
                rowIndex[change.key] = rows.count
                rows.append(
                    ShadowReport.Change(
                        capability: change.key.capability,
                        direction: change.key.gained ? .gained : .lost,
                        groupType: change.key.groupType,
                        liveRules: change.key.liveRules,
                        candidateRules: change.key.candidateRules,
                        liveRulesOmitted: change.key.liveRulesOmitted,
                        candidateRulesOmitted: change.key.candidateRulesOmitted,
                        groups: change.groups,
                        decisions: 1,
                        examples: [example]
                    )
                )
                bytesAtMost += change.key.jsonBytesAtMost + example.jsonBytesAtMost
            } else {
                dropped += change.groups
            }
        }
    }

    /// Counts one decision served with a candidate but not compared.
    mutating func skip() {
        version += 1
        skipped += 1
    }

    /// The report's rows, unsorted, and its counts.
    var report: ShadowReport {
        ShadowReport(
            liveRevision: liveRevision,
            candidateRevision: candidateRevision,
            since: since,
            decisions: decisions,
            changedDecisions: changedDecisions,
            dropped: dropped,
            skippedDecisions: skipped,
            changes: rows
        )
    }

    /// One decision's changes grouped by row, in the order each row first appears in it.
    static func rows(of changes: [CapabilityChange], in decision: Decision) -> [DecisionRow] {
        var grouped: [DecisionRow] = []
        var positions: [ShadowRowKey: Int] = [:]
        // Built once per decision that changed (a decision without a change never gets here).
        let groups = changes.isEmpty ? [] : decision.groups
        for change in changes {
            let group = groups[change.group]
            let key = ShadowRowKey(
                capability: change.capability.name,
                gained: change.gained,
                groupType: group.groupType.rawValue,
                allLiveRules: change.liveRules,
                allCandidateRules: change.candidateRules
            )
            if let position = positions[key] {
                grouped[position].groups += 1
            } else {
                positions[key] = grouped.count
                grouped.append(DecisionRow(key: key, groups: 1, firstGroupID: group.groupID))
            }
        }
        return grouped
    }
}
