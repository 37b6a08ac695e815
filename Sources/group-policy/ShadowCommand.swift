import AppStoreGroups
import ArgumentParsing
import Foundation
import GroupDecisions
import GroupPolicy
import GroupPolicyBasics
import ShadowReportReading

/// `group-policy shadow REPORT.json`: a decision service's shadow report (the decision server's
/// `GET /shadow`) as a table for people, or passed through validated.
enum ShadowCommand {
    static let spec = CommandSpec(
        "shadow",
        summary: "Show what a candidate policy would change, from a decision service's shadow report.",
        options: [
            .flag("json", help: "Print the report as read, once it validates, instead of a table."),
            .init("limit", value: "n", help: "Most rows in the table (default \(defaultLimit)); 0 shows all."),
        ],
        arguments: .init(["report"], minimum: 1, maximum: 1, missingMessage: "give one report file (or - for stdin)"),
        details: """
            REPORT is the JSON a decision service's shadow report writes (the decision server's GET /shadow),
            at most \(ShadowReport.maximumJSONBytes >> 20) MiB; '-' reads standard input. The table lists the changes
            most decisions had first: the capability gained or lost, the type of group, and the rules behind
            it under the live policy and under the candidate, the rules to look at. Names longer than \(cellWidth)
            characters and rule lists longer than \(shownRules) are cut, and a last line says so; --json has
            everything the report has. A service lists at most \(ShadowReport.maximumRulesPerList) rules a side and
            counts the rest, which the table adds to +N more.
            Exit status: 0 printed the report, 2 bad usage, an unreadable file or an invalid report.
            """
    )

    static let defaultLimit = 20
    static let cellWidth = 48
    static let shownRules = 3

    static func run(_ arguments: ParsedArguments) throws(CommandFailure) {
        var limit = defaultLimit
        if let text = arguments.value("limit") {
            guard let value = Int(text), value >= 0 else {
                throw arguments.usage("--limit needs a number of rows, 0 or more, not '\(text)'")
            }
            limit = value == 0 ? Int.max : value
        }
        let path = arguments.positionals[0]
        let bytes: [UInt8]
        do {
            bytes = try BoundedFileReader.read(pathOrStandardInput: path, maximumBytes: ShadowReport.maximumJSONBytes)
        } catch {
            throw CommandFailure(.unusable, error.message)
        }
        let report: ShadowReport
        do {
            report = try ShadowReport(jsonBytes: bytes, fileName: path == "-" ? "<stdin>" : path)
        } catch {
            throw CommandFailure(.unusable, "invalid shadow report: \(error.message)")
        }
        guard !arguments.has("json") else {
            FileHandle.standardOutput.write(Data(bytes))
            if bytes.last != UInt8(ascii: "\n") { FileHandle.standardOutput.write(Data("\n".utf8)) }
            return
        }
        Terminal.out(table(report, limit: limit))
    }

    /// The report for people: what was compared, the rows most decisions had first, and what was
    /// left out.
    static func table(_ report: ShadowReport, limit: Int) -> String {
        let since = Timestamp.rfc3339(report.since)
        guard let candidate = report.candidateRevision else {
            return "no candidate policy loaded: nothing compared (live policy \(report.liveRevision), since \(since))"
        }
        var lines = [
            "candidate \(candidate) beside live \(report.liveRevision), since \(since)",
            "\(report.decisions) decisions compared, \(report.changedDecisions) changed"
                + (report.decisions > 0 ? " (\(percent(report.changedDecisions, of: report.decisions)))" : ""),
        ]
        if report.skippedDecisions > 0 {
            lines.append(
                "\(report.skippedDecisions) decisions served were not compared: the comparisons waiting were at their "
                    + "limit (skippedDecisions)"
            )
        }
        guard !report.changes.isEmpty || report.dropped > 0 else {
            lines.append("no changes: the candidate decided every compared decision as the live policy did")
            return lines.joined(separator: "\n")
        }
        let shown = report.changes.prefix(limit)
        var cut = false
        func cell(_ text: String) -> String {
            let oneLine = text.escapingControlCharacters
            guard oneLine.count > cellWidth else { return oneLine }
            cut = true
            return oneLine.prefix(cellWidth - 1) + "…"
        }
        // Rules the service left out of the report (beyond its limit per list), in the rows shown.
        var omitted = 0
        func rules(_ ids: [String], omittedByService: Int) -> String {
            guard !ids.isEmpty || omittedByService > 0 else { return "-" }
            if ids.count > shownRules { cut = true }
            omitted += omittedByService
            let listed = ids.prefix(shownRules).map(cell).joined(separator: ", ")
            let more = max(0, ids.count - shownRules) + omittedByService
            guard more > 0 else { return listed }
            return listed.isEmpty ? "+\(more) more" : "\(listed) +\(more) more"
        }
        var cells = [["DECISIONS", "GROUPS", "CHANGE", "CAPABILITY", "GROUP TYPE", "LIVE RULES", "CANDIDATE RULES"]]
        for change in shown {
            cells.append([
                "\(change.decisions)", "\(change.groups)", change.direction.rawValue, cell(change.capability),
                cell(change.groupType), rules(change.liveRules, omittedByService: change.liveRulesOmitted),
                rules(change.candidateRules, omittedByService: change.candidateRulesOmitted),
            ])
        }
        let widths = (0..<cells[0].count).map { column in cells.map { $0[column].count }.max() ?? 0 }
        for row in cells {
            let padded = row.enumerated().map { column, text in
                let padding = String(repeating: " ", count: widths[column] - text.count)
                if column < 2 { return padding + text }
                return column == row.count - 1 ? text : text + padding
            }
            lines.append(padded.joined(separator: "  "))
        }
        var notes: [String] = []
        if shown.count < report.changes.count {
            let rest = report.changes.dropFirst(shown.count)
            notes.append(
                "\(rest.count) more rows not shown (each in \(rest.map(\.decisions).max() ?? 0) decisions or fewer; "
                    + "--limit 0 shows all)"
            )
        }
        if report.dropped > 0 {
            notes.append(
                "\(report.dropped) group-level changes not counted in any row: the report holds at most "
                    + "\(ShadowReport.maximumChanges) rows and \(ShadowReport.maximumReportBytes >> 20) MiB, "
                    + "a decision at most \(ShadowReport.maximumChangesPerDecision) changes"
            )
        }
        if cut { notes.append("long names and rule lists cut; --json has them whole") }
        if omitted > 0 {
            notes.append(
                "\(omitted) rules behind the rows shown are not in the report: a service lists at most "
                    + "\(ShadowReport.maximumRulesPerList) a side and counts the rest (+N more)"
            )
        }
        lines.append(
            "\(report.changes.count) kinds of change; gained/lost: under the candidate; rules: those that granted "
                + "or denied the capability in the group, '-' none"
        )
        return (lines + notes).joined(separator: "\n")
    }

    /// `part` of `whole` as a percentage with one decimal.
    private static func percent(_ part: Int, of whole: Int) -> String {
        String(format: "%.1f%%", Double(part) / Double(whole) * 100)
    }
}
