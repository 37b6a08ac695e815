import Foundation
import GroupDecisions
import GroupPolicy
import GroupPolicyBasics

extension ShadowReportReader {
    static let reportKeys = [
        "liveRevision", "candidateRevision", "since", "decisions", "changedDecisions", "dropped", "skippedDecisions",
        "changes",
    ]
    static let changeKeys = [
        "capability", "change", "groupType", "liveRules", "candidateRules", "liveRulesOmitted",
        "candidateRulesOmitted", "groups", "decisions", "examples",
    ]
    static let exampleKeys = ["decisionId", "customerHash", "groupId"]

    /// The rows read so far, in the file's order, with what checking them needs.
    private struct Rows {
        var changes: [ShadowReport.Change] = []
        var offsets: [Int] = []
        var firstIndex: [ShadowRowKey: Int] = [:]
        /// Whether every row read so far was valid and within the limit.
        var valid = true
    }

    /// Reads the whole document: the report, or `nil` with ``problem`` set; a syntax error throws,
    /// its path set.
    mutating func readDocument() throws(JSONSyntaxError) -> ShadowReport? {
        do throws(JSONSyntaxError) {
            scanner.skipWhitespace()
            guard !scanner.isAtEnd else { throw scanner.error("empty document (expected a JSON value)") }
            let report = try readReport()
            try scanner.expectEnd()
            return problem == nil ? report : nil
        } catch {
            var located = error
            located.path = currentPath
            throw located
        }
    }

    private mutating func readReport() throws(JSONSyntaxError) -> ShadowReport? {
        var liveRevision: String?
        var candidateRevision: String??
        var since: Date?
        var decisions: (value: Int?, offset: Int)?
        var changed: (value: Int?, offset: Int)?
        var dropped: Int?
        // Optional, 0 when absent: reports written before comparisons left the request path lack it.
        var skipped: Int? = 0
        var rows: Rows?
        let read = try readObject(depth: 0, allowed: Self.reportKeys) { reader, key throws(JSONSyntaxError) in
            switch Self.reportKeys[key] {
            case "liveRevision": liveRevision = try reader.string(depth: 1)
            case "candidateRevision": candidateRevision = try reader.nullableString(depth: 1)
            case "since": since = try reader.instant(depth: 1)
            case "decisions":
                decisions = try reader.located { reader throws(JSONSyntaxError) in try reader.count(depth: 1) }
            case "changedDecisions":
                changed = try reader.located { reader throws(JSONSyntaxError) in try reader.count(depth: 1) }
            case "dropped": dropped = try reader.count(depth: 1)
            case "skippedDecisions": skipped = try reader.count(depth: 1)
            default: rows = try reader.readChanges(depth: 1)  // changes
            }
        }
        guard let read else { return nil }
        requireKeys(read, Self.reportKeys, optional: ["skippedDecisions"])
        if let changed, let changedValue = changed.value, let decisionsValue = decisions?.value,
            changedValue > decisionsValue
        {
            fail(
                at: changed.offset,
                path: JSONPath.root.appending("changedDecisions"),
                "\(changedValue) changed decisions of \(decisionsValue) compared"
            )
        }
        if let rows, rows.valid, let changedValue = changed?.value,
            let row = rows.changes.firstIndex(where: { $0.decisions > changedValue })
        {
            fail(
                at: rows.offsets[row],
                path: JSONPath.root.appending("changes").appending(row).appending("decisions"),
                "\(rows.changes[row].decisions) decisions in a row, more than the \(changedValue) changed decisions"
            )
        }
        if case .some(.none) = candidateRevision, let decisions, let value = decisions.value, value > 0 {
            fail(
                at: decisions.offset,
                path: JSONPath.root.appending("decisions"),
                "\(value) decisions compared without a candidate (candidateRevision is null)"
            )
        }
        guard let liveRevision, let candidateRevision, let since, let decisions = decisions?.value,
            let changedDecisions = changed?.value, let dropped, let skipped, let rows, rows.valid
        else { return nil }
        return ShadowReport(
            liveRevision: liveRevision,
            candidateRevision: candidateRevision,
            since: since,
            decisions: decisions,
            changedDecisions: changedDecisions,
            dropped: dropped,
            skippedDecisions: skipped,
            changes: rows.changes
        )
    }

    /// The rows, each checked as it is read, a duplicate refused at once; at most
    /// ``ShadowReport/maximumChanges``, the elements after the limit skipped.
    private mutating func readChanges(depth: Int) throws(JSONSyntaxError) -> Rows? {
        var rows = Rows()
        let isArray = try readArray(depth: depth, of: "changes") { reader, index throws(JSONSyntaxError) in
            guard index < ShadowReport.maximumChanges else {
                rows.valid = false
                let offset = try reader.valueOffset()
                reader.fail(
                    at: offset,
                    "more than \(ShadowReport.maximumChanges) changes is over the limit of a report"
                )
                try reader.skipValue(depth: depth + 1)
                return false
            }
            let offset = try reader.valueOffset()
            guard let change = try reader.readChange(depth: depth + 1) else {
                rows.valid = false
                return true
            }
            let key = ShadowRowKey(
                capability: change.capability,
                gained: change.direction == .gained,
                groupType: change.groupType,
                liveRules: change.liveRules,
                candidateRules: change.candidateRules,
                liveRulesOmitted: change.liveRulesOmitted,
                candidateRulesOmitted: change.candidateRulesOmitted
            )
            if let first = rows.firstIndex[key] {
                reader.fail(
                    at: offset,
                    "the same change as changes[\(first)] (capability, change, groupType and rules)"
                )
            } else {
                rows.firstIndex[key] = index
            }
            rows.changes.append(change)
            rows.offsets.append(offset)
            return true
        }
        return isArray ? rows : nil
    }

    private mutating func readChange(depth: Int) throws(JSONSyntaxError) -> ShadowReport.Change? {
        var capability: String?
        var direction: ShadowReport.Direction?
        var groupType: String?
        var liveRules: [String]?
        var candidateRules: [String]?
        // Optional, 0 when absent: reports written before rule lists had a limit lack them.
        var liveOmitted: Int? = 0
        var candidateOmitted: Int? = 0
        var groups: Int?
        var decisions: (value: Int?, offset: Int)?
        var examples: (value: [ShadowReport.Example]?, offset: Int)?
        let read = try readObject(depth: depth, allowed: Self.changeKeys) { reader, key throws(JSONSyntaxError) in
            switch Self.changeKeys[key] {
            case "capability": capability = try reader.string(depth: depth + 1)
            case "change": direction = try reader.direction(depth: depth + 1)
            case "groupType": groupType = try reader.string(depth: depth + 1)
            case "liveRules": liveRules = try reader.rules(depth: depth + 1)
            case "candidateRules": candidateRules = try reader.rules(depth: depth + 1)
            case "liveRulesOmitted": liveOmitted = try reader.count(depth: depth + 1)
            case "candidateRulesOmitted": candidateOmitted = try reader.count(depth: depth + 1)
            case "groups": groups = try reader.count(depth: depth + 1, minimum: 1)
            case "decisions":
                decisions = try reader.located { reader throws(JSONSyntaxError) in
                    try reader.count(depth: depth + 1, minimum: 1)
                }
            default:  // examples
                examples = try reader.located { reader throws(JSONSyntaxError) in
                    try reader.readExamples(depth: depth + 1)
                }
            }
        }
        guard let read else { return nil }
        requireKeys(read, Self.changeKeys, optional: ["liveRulesOmitted", "candidateRulesOmitted"])
        if let decisions, let value = decisions.value, let groups, value > groups {
            fail(
                at: decisions.offset,
                path: read.path.appending("decisions"),
                "\(value) decisions with the change in \(groups) groups"
            )
        }
        if let examples, let list = examples.value, let value = decisions?.value, list.count > value {
            fail(
                at: examples.offset,
                path: read.path.appending("examples"),
                "\(list.count) examples of \(value) decisions"
            )
        }
        guard let capability, let direction, let groupType, let liveRules, let candidateRules, let liveOmitted,
            let candidateOmitted, let groups, let decisions = decisions?.value, let examples = examples?.value
        else { return nil }
        return ShadowReport.Change(
            capability: capability,
            direction: direction,
            groupType: groupType,
            liveRules: liveRules,
            candidateRules: candidateRules,
            liveRulesOmitted: liveOmitted,
            candidateRulesOmitted: candidateOmitted,
            groups: groups,
            decisions: decisions,
            examples: examples
        )
    }

    /// At most ``ShadowReport/maximumExamples``, the elements after the limit skipped.
    private mutating func readExamples(depth: Int) throws(JSONSyntaxError) -> [ShadowReport.Example]? {
        var examples: [ShadowReport.Example] = []
        var valid = true
        let isArray = try readArray(depth: depth, of: "examples") { reader, index throws(JSONSyntaxError) in
            guard index < ShadowReport.maximumExamples else {
                valid = false
                let offset = try reader.valueOffset()
                reader.fail(at: offset, "more than \(ShadowReport.maximumExamples) examples in a change")
                try reader.skipValue(depth: depth + 1)
                return false
            }
            var decisionID: String??
            var customerHash: String??
            var groupID: String?
            let read = try reader.readObject(depth: depth + 1, allowed: Self.exampleKeys) {
                reader,
                key throws(JSONSyntaxError) in
                switch Self.exampleKeys[key] {
                case "decisionId": decisionID = try reader.nullableString(depth: depth + 2)
                case "customerHash": customerHash = try reader.nullableString(depth: depth + 2)
                default: groupID = try reader.string(depth: depth + 2)  // groupId
                }
            }
            guard let read else {
                valid = false
                return true
            }
            reader.requireKeys(read, Self.exampleKeys)
            guard let decisionID, let customerHash, let groupID else {
                valid = false
                return true
            }
            examples.append(ShadowReport.Example(decisionID: decisionID, customerHash: customerHash, groupID: groupID))
            return true
        }
        return isArray && valid ? examples : nil
    }
}
