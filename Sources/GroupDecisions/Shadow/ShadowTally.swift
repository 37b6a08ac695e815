import AppStoreGroups
import Foundation
import GroupPolicy

/// The counts a shadow accumulates for one pair of policy revisions, mutated under the shadow's
/// lock: a few additions per decision, a dictionary lookup per kind of change it had.
struct ShadowTally {
    /// A row's identity: names compared by their bytes, as evaluation compares them, with the hash
    /// computed before the lock is taken.
    struct RowKey: Hashable {
        var capability: String
        var gained: Bool
        var groupType: String
        var liveRules: [String]
        var candidateRules: [String]
        private let byteHash: Int

        init(capability: String, gained: Bool, groupType: String, liveRules: [String], candidateRules: [String]) {
            self.capability = capability
            self.gained = gained
            self.groupType = groupType
            self.liveRules = liveRules
            self.candidateRules = candidateRules
            var hasher = Hasher()
            hasher.combine(gained)
            for name in [capability, groupType] + liveRules + [""] + candidateRules {
                var name = name
                name.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
                hasher.combine(name.utf8.count)
            }
            byteHash = hasher.finalize()
        }

        static func == (left: RowKey, right: RowKey) -> Bool {
            left.byteHash == right.byteHash && left.gained == right.gained
                && left.capability.utf8.elementsEqual(right.capability.utf8)
                && left.groupType.utf8.elementsEqual(right.groupType.utf8)
                && sameBytes(left.liveRules, right.liveRules) && sameBytes(left.candidateRules, right.candidateRules)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(byteHash)
        }

        private static func sameBytes(_ left: [String], _ right: [String]) -> Bool {
            left.count == right.count && zip(left, right).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
        }
    }

    /// One decision's changes of one row: how many groups had it, and the first of them.
    struct DecisionRow {
        var key: RowKey
        var groups: Int
        var firstGroupID: String
    }

    private struct Row {
        var key: RowKey
        var groups: Int
        var decisions: Int
        var examples: [ShadowReport.Example]
    }

    let liveRevision: String
    let candidateRevision: String?
    let since: Date
    private var decisions = 0
    private var changedDecisions = 0
    private var dropped = 0
    private var rowIndex: [RowKey: Int] = [:]
    private var rows: [Row] = []

    init(liveRevision: String, candidateRevision: String?, since: Date) {
        self.liveRevision = liveRevision
        self.candidateRevision = candidateRevision
        self.since = since
    }

    /// Whether decisions made with these revisions count here.
    func counts(live: String, candidate: String) -> Bool {
        liveRevision == live && candidateRevision == candidate
    }

    /// Counts one decision compared, with its changes grouped by row.
    mutating func record(_ changes: [DecisionRow], decisionID: String?, customerHash: String?) {
        decisions += 1
        guard !changes.isEmpty else { return }
        changedDecisions += 1
        for change in changes {
            let example = ShadowReport.Example(
                decisionID: decisionID,
                customerHash: customerHash,
                groupID: change.firstGroupID
            )
            if let index = rowIndex[change.key] {
                rows[index].groups += change.groups
                rows[index].decisions += 1
                if rows[index].examples.count < ShadowReport.maximumExamples { rows[index].examples.append(example) }
            } else if rows.count < ShadowReport.maximumChanges {
                rowIndex[change.key] = rows.count
                rows.append(Row(key: change.key, groups: change.groups, decisions: 1, examples: [example]))
            } else {
                dropped += change.groups
            }
        }
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
            changes: rows.map { row in
                ShadowReport.Change(
                    capability: row.key.capability,
                    direction: row.key.gained ? .gained : .lost,
                    groupType: row.key.groupType,
                    liveRules: row.key.liveRules,
                    candidateRules: row.key.candidateRules,
                    groups: row.groups,
                    decisions: row.decisions,
                    examples: row.examples
                )
            }
        )
    }

    /// One decision's changes grouped by row, in the order each row first appears in it.
    static func rows(of changes: [CapabilityChange], in decision: Decision) -> [DecisionRow] {
        var grouped: [DecisionRow] = []
        var positions: [RowKey: Int] = [:]
        // Built once per decision that changed (a decision without a change never gets here).
        let groups = changes.isEmpty ? [] : decision.groups
        for change in changes {
            let group = groups[change.group]
            let key = RowKey(
                capability: change.capability.name,
                gained: change.gained,
                groupType: group.groupType.rawValue,
                liveRules: change.liveRules,
                candidateRules: change.candidateRules
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
