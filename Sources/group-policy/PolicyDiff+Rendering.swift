import GroupPolicy
import GroupPolicyTooling

extension PolicyDiff {
    /// The rows as an aligned table for people (a pull request, a terminal), then a summary line.
    ///
    /// `*` is any value, `-` is none. Without changes, only the summary line.
    var table: String {
        var lines: [String] = []
        if !rows.isEmpty {
            var cells = [
                ["CHANGE", "CAPABILITY", "ENVIRONMENT", "GROUP TYPE", "GROUP ID", "ROLE ENTRIES", "ENTITLEMENTS"]
            ]
            for row in rows {
                let roles = row.roles.map { "\($0.productID ?? "*"):\($0.role ?? "*")" }.joined(separator: ", ")
                cells.append(
                    [
                        row.change == .added ? "+" : "-",
                        row.capability,
                        row.environment?.rawValue ?? "*",
                        row.groupType ?? "*",
                        row.groupID ?? "*",
                        roles.isEmpty ? "-" : roles,
                        row.entitlements.isEmpty ? "-" : row.entitlements.joined(separator: ", "),
                    ].map(\.escapingControlCharacters)
                )
            }
            let widths = (0..<cells[0].count).map { column in cells.map { $0[column].count }.max() ?? 0 }
            for row in cells {
                let padded = row.enumerated().map { column, text in
                    column == row.count - 1 ? text : text + String(repeating: " ", count: widths[column] - text.count)
                }
                lines.append(padded.joined(separator: "  "))
            }
        }
        lines.append(summary)
        return lines.joined(separator: "\n")
    }

    /// One line: how many changes over how many scenarios, and what the notation means.
    var summary: String {
        guard !rows.isEmpty else { return "no capability changes (\(scenarioCount) scenarios compared)" }
        let added = rows.filter { $0.change == .added }.count
        return "\(rows.count) change\(rows.count == 1 ? "" : "s") (\(added) added, \(rows.count - added) removed) "
            + "in minimal scenarios of \(scenarioCount) compared; '*' is any value, '-' none; "
            + "values no version names: type \(unnamedGroupType), group \(unnamedGroupID), role \(unnamedRole), "
            + "products \(unnamedProductIDs.joined(separator: ", "))"
    }
}
