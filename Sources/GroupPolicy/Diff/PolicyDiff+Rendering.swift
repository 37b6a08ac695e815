extension PolicyDiff {
    /// The rows as an aligned table for people (a pull request, a terminal), then a summary line.
    ///
    /// `*` is any value, `-` is none. Without changes, only the summary line.
    public var table: String {
        var lines: [String] = []
        if !rows.isEmpty {
            var cells = [
                ["CHANGE", "CAPABILITY", "ENVIRONMENT", "GROUP TYPE", "GROUP ID", "ROLE ENTRIES", "ENTITLEMENTS"]
            ]
            for row in rows {
                let roles = row.roles.map { "\($0.productID ?? "*"):\($0.role ?? "*")" }.joined(separator: ", ")
                cells.append([
                    row.change == .added ? "+" : "-",
                    row.capability,
                    row.environment?.rawValue ?? "*",
                    row.groupType ?? "*",
                    row.groupID ?? "*",
                    roles.isEmpty ? "-" : roles,
                    row.entitlements.isEmpty ? "-" : row.entitlements.joined(separator: ", "),
                ])
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
    public var summary: String {
        guard !rows.isEmpty else { return "no capability changes (\(scenarioCount) scenarios compared)" }
        let added = rows.filter { $0.change == .added }.count
        return "\(rows.count) change\(rows.count == 1 ? "" : "s") (\(added) added, \(rows.count - added) removed) "
            + "in minimal scenarios of \(scenarioCount) compared; '*' is any value, '-' none; "
            + "values no version names: type \(unnamedGroupType), group \(unnamedGroupID), role \(unnamedRole), "
            + "products \(unnamedProductIDs.joined(separator: ", "))"
    }

    /// The diff as JSON for machines: `scenarios`, `unnamed` (the values standing for any value no
    /// version names) and `changes`, one object per row with `"*"` for any value and an `example`
    /// scenario (`context` and `response`).
    ///
    /// - Parameter pretty: Pretty with two-space indentation, or compact.
    /// - Returns: The JSON text, without a trailing newline.
    public func jsonString(pretty: Bool = true) -> String {
        var writer = JSONWriter(pretty: pretty)
        writer.beginObject()
        writer.key("scenarios")
        writer.number(Int64(scenarioCount))
        writer.key("unnamed")
        writer.beginObject()
        writer.member("groupType", unnamedGroupType)
        writer.member("groupId", unnamedGroupID)
        writer.member("role", unnamedRole)
        writer.member("productIds", strings: unnamedProductIDs)
        writer.endObject()
        writer.key("changes")
        writer.beginArray()
        for row in rows {
            writer.beginObject()
            writer.member("change", row.change.description)
            writer.member("capability", row.capability)
            writer.member("environment", row.environment?.rawValue ?? "*")
            writer.member("groupType", row.groupType ?? "*")
            writer.member("groupId", row.groupID ?? "*")
            writer.key("roles")
            writer.beginArray()
            for entry in row.roles {
                writer.beginObject()
                writer.member("productId", entry.productID ?? "*")
                writer.member("role", entry.role ?? "*")
                writer.endObject()
            }
            writer.endArray()
            writer.member("entitlements", strings: row.entitlements)
            writer.key("example")
            writer.beginObject()
            writer.key("context")
            row.example.writeContext(to: &writer)
            writer.key("response")
            row.example.response.write(to: &writer)
            writer.endObject()
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.string
    }
}
