import Foundation
package import GroupDecisions
import GroupPolicy
import GroupPolicyBasics

/// The shadow report reader as it was before it streamed, kept as an oracle.
///
/// It reads the document into a JSON tree with the policy loader's reader, then its values from
/// the tree, collecting every problem and reporting the first in the file. The CLI's streaming
/// reader is compared with it.
package enum TreeShadowReportReader {
    /// Why a report was refused: the first problem in the file, on one line.
    package struct Refusal: Error, CustomStringConvertible {
        /// `file:line:column: json.path: what is wrong`.
        package var message: String
        /// The JSON path of the offending value, when there is one.
        package var jsonPath: String?

        package var description: String { message }
    }

    /// What `group-policy shadow` reads from `jsonBytes`, read through a tree.
    package static func read(_ jsonBytes: [UInt8], fileName: String? = nil) throws(Refusal) -> ShadowReport {
        var limits = PolicyLimits.default
        limits.maximumBytes = 64 << 20
        let collector = DiagnosticCollector(source: SourceText(fileName: fileName, bytes: jsonBytes))
        let report = readJSON(collector, limits: limits).flatMap { TreeReportReader(collector: collector).report($0) }
        if let problem = collector.sortedDiagnostics.first(where: { $0.severity == .error }) {
            let place = problem.location.map { "\($0): " } ?? ""
            throw Refusal(
                message: "\(place)\(problem.jsonPath): \(problem.message)".escapingControlCharacters,
                jsonPath: problem.jsonPath
            )
        }
        guard var report else {
            throw Refusal(message: "\(fileName ?? "<input>"): not a shadow report")
        }
        report.changes.sort(by: ShadowReport.Change.precedes)
        return report
    }
}

/// Reads the values of a report's JSON, reporting what is wrong to a collector.
private struct TreeReportReader {
    let collector: DiagnosticCollector

    static let reportKeys = [
        "liveRevision", "candidateRevision", "since", "decisions", "changedDecisions", "dropped", "skippedDecisions",
        "changes",
    ]
    static let changeKeys = [
        "capability", "change", "groupType", "liveRules", "candidateRules", "liveRulesOmitted",
        "candidateRulesOmitted", "groups", "decisions", "examples",
    ]
    static let exampleKeys = ["decisionId", "customerHash", "groupId"]

    func report(_ root: JSONNode) -> ShadowReport? {
        let path = JSONPath.root
        guard let fields = collector.object(root, path, allowed: Self.reportKeys) else { return nil }
        let liveRevision = fields.required("liveRevision").flatMap {
            collector.string($0, path.appending("liveRevision"))
        }
        let candidateRevision = fields.required("candidateRevision").flatMap {
            nullableString($0, path.appending("candidateRevision"))
        }
        let since = fields.required("since").flatMap { instant($0, path.appending("since")) }
        let decisions = fields.required("decisions").flatMap { count($0, path.appending("decisions")) }
        let changedNode = fields.required("changedDecisions")
        let changedDecisions = changedNode.flatMap { count($0, path.appending("changedDecisions")) }
        let dropped = fields.required("dropped").flatMap { count($0, path.appending("dropped")) }
        // Optional, 0 when absent: reports written before comparisons left the request path lack it.
        let skipped: Int? =
            if let node = fields["skippedDecisions"] { count(node, path.appending("skippedDecisions")) } else { 0 }
        let changes = fields.required("changes").flatMap { self.changes($0, path.appending("changes")) }
        if let changedNode, let decisions, let changedDecisions, changedDecisions > decisions {
            collector.error(
                .invalidValue,
                at: changedNode.offset,
                path.appending("changedDecisions"),
                "\(changedDecisions) changed decisions of \(decisions) compared"
            )
        }
        if let changes, let changedDecisions, let row = changes.firstIndex(where: { $0.decisions > changedDecisions }),
            case .array(let elements)? = fields["changes"]?.value
        {
            collector.error(
                .invalidValue,
                at: elements[row].offset,
                path.appending("changes").appending(row).appending("decisions"),
                "\(changes[row].decisions) decisions in a row, more than the \(changedDecisions) changed decisions"
            )
        }
        if case .some(.none) = candidateRevision, let decisions, decisions > 0, let node = fields["decisions"] {
            collector.error(
                .invalidValue,
                at: node.offset,
                path.appending("decisions"),
                "\(decisions) decisions compared without a candidate (candidateRevision is null)"
            )
        }
        guard let liveRevision, let candidateRevision, let since, let decisions, let changedDecisions, let dropped,
            let skipped, let changes
        else { return nil }
        return ShadowReport(
            liveRevision: liveRevision,
            candidateRevision: candidateRevision,
            since: since,
            decisions: decisions,
            changedDecisions: changedDecisions,
            dropped: dropped,
            skippedDecisions: skipped,
            changes: changes
        )
    }

    /// The elements of the array at `node`, or `nil` after a located error when it is not an
    /// array of `noun` or holds more than `maximum` (the message: "more than N " + `over`).
    private func array(
        _ node: JSONNode,
        _ path: JSONPath,
        of noun: String,
        maximum: Int,
        over: String
    ) -> [JSONNode]? {
        guard case .array(let elements) = node.value else {
            collector.error(
                .wrongType,
                at: node.offset,
                path,
                "expected an array of \(noun), found \(node.value.typeName)"
            )
            return nil
        }
        guard elements.count <= maximum else {
            collector.error(
                .limitExceeded,
                at: elements[maximum].offset,
                path.appending(maximum),
                "more than \(maximum) \(over)"
            )
            return nil
        }
        return elements
    }

    private func changes(_ node: JSONNode, _ path: JSONPath) -> [ShadowReport.Change]? {
        guard
            let elements = array(
                node,
                path,
                of: "changes",
                maximum: ShadowReport.maximumChanges,
                over: "changes is over the limit of a report"
            )
        else { return nil }
        var changes: [ShadowReport.Change] = []
        var seen: [ShadowRowKey: Int] = [:]
        for (index, element) in elements.enumerated() {
            guard let change = self.change(element, path.appending(index)) else { continue }
            let key = ShadowRowKey(
                capability: change.capability,
                gained: change.direction == .gained,
                groupType: change.groupType,
                liveRules: change.liveRules,
                candidateRules: change.candidateRules,
                liveRulesOmitted: change.liveRulesOmitted,
                candidateRulesOmitted: change.candidateRulesOmitted
            )
            if let first = seen[key] {
                collector.error(
                    .duplicateID,
                    at: element.offset,
                    path.appending(index),
                    "the same change as changes[\(first)] (capability, change, groupType and rules)"
                )
            }
            seen[key] = seen[key] ?? index
            changes.append(change)
        }
        return changes.count == elements.count ? changes : nil
    }

    private func change(_ node: JSONNode, _ path: JSONPath) -> ShadowReport.Change? {
        guard let fields = collector.object(node, path, allowed: Self.changeKeys) else { return nil }
        let capability = fields.required("capability").flatMap { collector.string($0, path.appending("capability")) }
        let direction = fields.required("change").flatMap { node -> ShadowReport.Direction? in
            guard let text = collector.string(node, path.appending("change")) else { return nil }
            guard let direction = ShadowReport.Direction(rawValue: text) else {
                collector.error(
                    .invalidValue,
                    at: node.offset,
                    path.appending("change"),
                    "unknown change '\(text)' (gained or lost)"
                )
                return nil
            }
            return direction
        }
        let groupType = fields.required("groupType").flatMap { collector.string($0, path.appending("groupType")) }
        let liveRules = fields.required("liveRules").flatMap { rules($0, path.appending("liveRules")) }
        let candidateRules = fields.required("candidateRules").flatMap { rules($0, path.appending("candidateRules")) }
        // Optional, 0 when absent: reports written before rule lists had a limit lack them.
        let liveOmitted: Int? =
            if let node = fields["liveRulesOmitted"] { count(node, path.appending("liveRulesOmitted")) } else { 0 }
        let candidateOmitted: Int? =
            if let node = fields["candidateRulesOmitted"] {
                count(node, path.appending("candidateRulesOmitted"))
            } else { 0 }
        let groups = fields.required("groups").flatMap { count($0, path.appending("groups"), minimum: 1) }
        let decisionsNode = fields.required("decisions")
        let decisions = decisionsNode.flatMap { count($0, path.appending("decisions"), minimum: 1) }
        let examples = fields.required("examples").flatMap { self.examples($0, path.appending("examples")) }
        if let decisionsNode, let groups, let decisions, decisions > groups {
            collector.error(
                .invalidValue,
                at: decisionsNode.offset,
                path.appending("decisions"),
                "\(decisions) decisions with the change in \(groups) groups"
            )
        }
        if let examples, let decisions, examples.count > decisions, let node = fields["examples"] {
            collector.error(
                .invalidValue,
                at: node.offset,
                path.appending("examples"),
                "\(examples.count) examples of \(decisions) decisions"
            )
        }
        guard let capability, let direction, let groupType, let liveRules, let candidateRules, let liveOmitted,
            let candidateOmitted, let groups, let decisions, let examples
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

    private func examples(_ node: JSONNode, _ path: JSONPath) -> [ShadowReport.Example]? {
        guard
            let elements = array(
                node,
                path,
                of: "examples",
                maximum: ShadowReport.maximumExamples,
                over: "examples in a change"
            )
        else { return nil }
        var examples: [ShadowReport.Example] = []
        for (index, element) in elements.enumerated() {
            let examplePath = path.appending(index)
            guard let fields = collector.object(element, examplePath, allowed: Self.exampleKeys) else { continue }
            let decisionID = fields.required("decisionId").flatMap {
                nullableString($0, examplePath.appending("decisionId"))
            }
            let customerHash = fields.required("customerHash").flatMap {
                nullableString($0, examplePath.appending("customerHash"))
            }
            let groupID = fields.required("groupId").flatMap { collector.string($0, examplePath.appending("groupId")) }
            guard let decisionID, let customerHash, let groupID else { continue }
            examples.append(ShadowReport.Example(decisionID: decisionID, customerHash: customerHash, groupID: groupID))
        }
        return examples.count == elements.count ? examples : nil
    }

    /// A list of rule ids, sorted by their bytes with none repeated, as the report writes them.
    private func rules(_ node: JSONNode, _ path: JSONPath) -> [String]? {
        guard let located = collector.stringArray(node, path) else { return nil }
        for index in located.indices.dropFirst()
        where ShadowReport.Change.byteOrder(located[index - 1].value, located[index].value) != true {
            collector.error(
                .invalidValue,
                at: located[index].offset,
                located[index].path,
                "rule ids must be sorted by their bytes, each once: '\(located[index].value)' follows "
                    + "'\(located[index - 1].value)'"
            )
            return nil
        }
        return located.map(\.value)
    }

    /// A string, or `nil` for JSON `null`; the outer `nil` when it is neither (reported).
    private func nullableString(_ node: JSONNode, _ path: JSONPath) -> String?? {
        switch node.value {
        case .null: return .some(nil)
        case .string(let value): return .some(value)
        default:
            collector.error(
                .wrongType,
                at: node.offset,
                path,
                "expected a string or null, found \(node.value.typeName)"
            )
            return nil
        }
    }

    /// A whole number from `minimum` up, written without a sign, fraction or exponent.
    private func count(_ node: JSONNode, _ path: JSONPath, minimum: Int = 0) -> Int? {
        guard case .number(let text) = node.value, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            text.utf8.count <= 18, let value = Int(text), value >= minimum
        else {
            let found = if case .number(let text) = node.value { "\(text)" } else { node.value.typeName }
            collector.error(
                .wrongType,
                at: node.offset,
                path,
                "expected a whole number of at least \(minimum) and at most 18 digits, found \(found)"
            )
            return nil
        }
        return value
    }

    /// An instant as the report writes it: RFC 3339 in UTC with milliseconds.
    private func instant(_ node: JSONNode, _ path: JSONPath) -> Date? {
        guard let text = collector.string(node, path) else { return nil }
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count, bytes[range].allSatisfy({ (0x30...0x39).contains($0) }) else {
                return nil
            }
            return bytes[range].reduce(0) { $0 * 10 + Int64($1 - 0x30) }
        }
        if bytes.count == 24, let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            let millisecond = number(20..<23)
        {
            // Howard Hinnant's days-from-civil; out-of-range fields fail the round trip below.
            let shiftedYear = month <= 2 ? year - 1 : year
            let era = shiftedYear / 400
            let yearOfEra = shiftedYear - era * 400
            let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
            let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
            let days = era * 146_097 + dayOfEra - 719_468
            let milliseconds = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millisecond
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            if Timestamp.rfc3339(date) == text { return date }
        }
        collector.error(
            .invalidValue,
            at: node.offset,
            path,
            "expected an instant such as 2026-11-30T19:00:00.123Z (UTC, with milliseconds), found '\(text)'"
        )
        return nil
    }
}
