import GroupPolicy
import GroupPolicyBasics

/// The diff as `group-policy diff` prints it and the playground shows it: a table for people.
extension PolicyDiff {
    /// The verdict line, then the rows as an aligned table for people (a pull request, a terminal),
    /// then a summary line; then, when a workspace membership changes, an empty line, the
    /// workspace rows and their summary line.
    ///
    /// `*` is any value, `-` is none. Without changes, only the verdict and the summary line.
    package var table: String {
        var lines = [verdictLine]
        if !rows.isEmpty {
            lines += Self.aligned(
                header: ["CHANGE", "CAPABILITY"],
                rows.map { row in
                    [row.change == .added ? "+" : "-", row.capability]
                        + Self.scenarioCells(row.environment, row.groupType, row.groupID, row.roles, row.entitlements)
                }
            )
        }
        lines.append(summary)
        guard !workspaceRows.isEmpty else { return lines.joined(separator: "\n") }
        lines.append("")
        lines += Self.aligned(
            header: ["CHANGE", "WORKSPACE", "MEMBERSHIP"],
            workspaceRows.map { row in
                let change = row.oldRole == nil ? "+" : row.newRole == nil ? "-" : "~"
                let membership = "\(row.oldRole?.rawValue ?? "none") -> \(row.newRole?.rawValue ?? "none")"
                return [change, row.workspace, membership]
                    + Self.scenarioCells(row.environment, row.groupType, row.groupID, row.roles, row.entitlements)
            }
        )
        lines.append(workspaceSummary)
        return lines.joined(separator: "\n")
    }

    /// The most capabilities, and workspaces, the verdict line names.
    package static let verdictNames = 10

    /// One line: the verdict, then each capability and workspace that changes with its own (the
    /// first ``verdictNames`` of each):
    /// `verdict: widens and narrows (2 capabilities: a widens, b narrows; 1 workspace: team narrows)`.
    package var verdictLine: String {
        func listed(_ items: [(name: String, verdict: Verdict)], _ noun: String, _ plural: String? = nil) -> String? {
            guard !items.isEmpty else { return nil }
            let names = items.prefix(Self.verdictNames).map { "\($0.name) \($0.verdict)" }
            let more = items.count > Self.verdictNames ? ", and \(items.count - Self.verdictNames) more" : ""
            let count = "\(items.count) \(items.count == 1 ? noun : plural ?? noun + "s")"
            return "\(count): \(names.joined(separator: ", "))\(more)"
        }
        let parts = [
            listed(capabilityVerdicts.map { ($0.capability, $0.verdict) }, "capability", "capabilities"),
            listed(workspaceVerdicts.map { ($0.workspace, $0.verdict) }, "workspace"),
        ]
        .compactMap { $0 }
        let details = parts.isEmpty ? "" : " (\(parts.joined(separator: "; ")))"
        return "verdict: \(verdict)\(details)".escapingControlCharacters
    }

    /// One line: how many changes over how many scenarios, and what the notation means.
    package var summary: String {
        guard !rows.isEmpty else { return "no capability changes (\(scenarioCount) scenarios compared)" }
        let added = rows.filter { $0.change == .added }.count
        return "\(rows.count) change\(rows.count == 1 ? "" : "s") (\(added) added, \(rows.count - added) removed) "
            + "in minimal scenarios of \(scenarioCount) compared; '*' is any value, '-' none; "
            + "values no version names: type \(unnamedGroupType), group \(unnamedGroupID), role \(unnamedRole), "
            + "products \(unnamedProductIDs.joined(separator: ", "))"
    }

    /// One line: how many membership changes, of which kinds, over how many scenarios.
    package var workspaceSummary: String {
        let gained = workspaceRows.filter { $0.oldRole == nil }.count
        let lost = workspaceRows.filter { $0.newRole == nil }.count
        let count = workspaceRows.count
        return "\(count) workspace membership change\(count == 1 ? "" : "s") (\(gained) gained, \(lost) lost, "
            + "\(count - gained - lost) changed role) in minimal scenarios of \(workspaceScenarioCount) compared"
    }

    /// The cells of a row's class of scenarios, from the environment to the entitlements.
    private static func scenarioCells(
        _ environment: StoreEnvironment?,
        _ groupType: String?,
        _ groupID: String?,
        _ roles: [EntryPattern],
        _ entitlements: [String]
    ) -> [String] {
        let entries = roles.map { "\($0.productID ?? "*"):\($0.role ?? "*")" }.joined(separator: ", ")
        return [
            environment?.rawValue ?? "*",
            groupType ?? "*",
            groupID ?? "*",
            entries.isEmpty ? "-" : entries,
            entitlements.isEmpty ? "-" : entitlements.joined(separator: ", "),
        ]
    }

    /// A header and rows as lines of columns padded to their widest cell, two spaces apart (the
    /// last column unpadded); control characters escaped.
    private static func aligned(header: [String], _ rows: [[String]]) -> [String] {
        let cells =
            [header + ["ENVIRONMENT", "GROUP TYPE", "GROUP ID", "ROLE ENTRIES", "ENTITLEMENTS"]]
            + rows.map { $0.map(\.escapingControlCharacters) }
        let widths = (0..<cells[0].count).map { column in cells.map { $0[column].count }.max() ?? 0 }
        return cells.map { row in
            row.enumerated().map { column, text in
                column == row.count - 1 ? text : text + String(repeating: " ", count: widths[column] - text.count)
            }
            .joined(separator: "  ")
        }
    }
}
