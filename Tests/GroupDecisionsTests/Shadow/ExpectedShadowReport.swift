import Foundation
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// A shadow report computed the slow, obvious way, for comparison with the service's: each decision
/// evaluated under both policies through the public API, each group's capabilities compared as
/// sets of names, the rules read from the materialised grants and denials, the rows kept in a
/// dictionary keyed by bytes and sorted at the end by a comparison written out here.
///
/// It calls nothing of the shadow's own (no correspondence, no tally, no row order).
struct ExpectedShadowReport {
    private struct Key: Hashable {
        var capability: [UInt8]
        var gained: Bool
        var groupType: [UInt8]
        var liveRules: [[UInt8]]
        var candidateRules: [[UInt8]]
    }

    private struct Row {
        var key: Key
        var groups = 0
        var decisions = 0
        var examples: [ShadowReport.Example] = []
    }

    private var rows: [Key: Row] = [:]
    var decisions = 0
    var changedDecisions = 0
    var dropped = 0
    /// The most rows; beyond it, group-level changes count as dropped.
    var maximumRows = 10_000

    /// Counts one decision: `live` is what was served, `candidate` the candidate's decision of the
    /// same groups and context, `decisionID` the id the service served it with.
    mutating func add(live: Decision, candidate: Decision, customerHash: String?, decisionID: String) {
        decisions += 1
        let liveGroups = live.groups
        let candidateGroups = candidate.groups
        precondition(liveGroups.map(\.groupID) == candidateGroups.map(\.groupID), "the decisions' groups differ")
        var seenInThisDecision: Set<Key> = []
        var changed = false
        for (liveGroup, candidateGroup) in zip(liveGroups, candidateGroups) {
            let before = Set(liveGroup.capabilities.names)
            let after = Set(candidateGroup.capabilities.names)
            let changes = before.subtracting(after).map { ($0, false) } + after.subtracting(before).map { ($0, true) }
            for (capability, gained) in changes.sorted(by: {
                Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8))
            }) {
                changed = true
                let key = Key(
                    capability: Array(capability.utf8),
                    gained: gained,
                    groupType: Array(liveGroup.groupType.rawValue.utf8),
                    liveRules: Self.rules(of: capability, in: liveGroup.groupID, live),
                    candidateRules: Self.rules(of: capability, in: liveGroup.groupID, candidate)
                )
                // A new row only while there is room; beyond it, the change is dropped.
                guard var row = rows[key] ?? (rows.count < maximumRows ? Row(key: key) : nil) else {
                    dropped += 1
                    continue
                }
                row.groups += 1
                if seenInThisDecision.insert(key).inserted {
                    row.decisions += 1
                    if row.examples.count < 5 {
                        let groupID = liveGroup.groupID
                        row.examples.append(
                            ShadowReport.Example(decisionID: decisionID, customerHash: customerHash, groupID: groupID)
                        )
                    }
                }
                rows[key] = row
            }
        }
        if changed { changedDecisions += 1 }
    }

    /// The rule ids among the decision's grants and denials of `capability` in `groupID`, each once, sorted by bytes.
    private static func rules(of capability: String, in groupID: String, _ decision: Decision) -> [[UInt8]] {
        let granting = decision.grants.filter { $0.capability == capability && $0.groupID == groupID }.map(\.rule)
        let denying = decision.denials.filter { $0.capability == capability && $0.groupID == groupID }.map(\.rule)
        return Set((granting + denying).map { Array($0.utf8) }).sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// The report, rows by decisions (more first), then capability, gained before lost, group type,
    /// live rules, candidate rules, all by bytes.
    func report(liveRevision: String, candidateRevision: String?, since: Date) -> ShadowReport {
        func before(_ left: [[UInt8]], _ right: [[UInt8]]) -> Bool {
            left.lexicographicallyPrecedes(right) { $0.lexicographicallyPrecedes($1) }
        }
        let sorted = rows.values.sorted { left, right in
            if left.decisions != right.decisions { return left.decisions > right.decisions }
            if left.key.capability != right.key.capability {
                return left.key.capability.lexicographicallyPrecedes(right.key.capability)
            }
            if left.key.gained != right.key.gained { return left.key.gained }
            if left.key.groupType != right.key.groupType {
                return left.key.groupType.lexicographicallyPrecedes(right.key.groupType)
            }
            if left.key.liveRules != right.key.liveRules { return before(left.key.liveRules, right.key.liveRules) }
            return before(left.key.candidateRules, right.key.candidateRules)
        }
        return ShadowReport(
            liveRevision: liveRevision,
            candidateRevision: candidateRevision,
            since: since,
            decisions: decisions,
            changedDecisions: changedDecisions,
            dropped: dropped,
            changes: sorted.map { row in
                ShadowReport.Change(
                    capability: String(decoding: row.key.capability, as: UTF8.self),
                    direction: row.key.gained ? .gained : .lost,
                    groupType: String(decoding: row.key.groupType, as: UTF8.self),
                    liveRules: row.key.liveRules.map { String(decoding: $0, as: UTF8.self) },
                    candidateRules: row.key.candidateRules.map { String(decoding: $0, as: UTF8.self) },
                    groups: row.groups,
                    decisions: row.decisions,
                    examples: row.examples
                )
            }
        )
    }
}
