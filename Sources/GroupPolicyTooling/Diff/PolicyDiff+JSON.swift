import GroupPolicy
import GroupPolicyBasics

extension PolicyDiff {
    /// The diff as JSON for machines: `verdict` (``Verdict``: `equivalent`, `widens`, `narrows` or
    /// `widens and narrows`, for capabilities and workspaces together), `capabilityVerdicts` (each
    /// capability whose answer changes, with its verdict), `scenarios`, `unnamed` (the values standing for any value no
    /// version names) and `changes`, one object per row with `"*"` for any value and an `example`
    /// scenario (`context` and `response`); then, when a workspace membership changes,
    /// `workspaceVerdicts`, `workspaceScenarios` and `workspaceChanges`, one object per workspace
    /// row, with `oldRole` and `newRole` (`admin`, `member` or `none`).
    ///
    /// - Parameter pretty: Pretty with two-space indentation, or compact.
    /// - Returns: The JSON text, without a trailing newline.
    public func jsonString(pretty: Bool = true) -> String {
        var writer = JSONWriter(pretty: pretty)
        writer.beginObject()
        writer.member("verdict", verdict.description)
        writer.key("capabilityVerdicts")
        writer.beginObject()
        for (capability, verdict) in capabilityVerdicts { writer.member(capability, verdict.description) }
        writer.endObject()
        writer.member("scenarios", number: scenarioCount)
        writer.key("unnamed")
        writer.beginObject()
        writer.member("groupType", unnamedGroupType)
        writer.member("groupId", unnamedGroupID)
        writer.member("role", unnamedRole)
        writer.member("productIds", strings: unnamedProductIDs)
        writer.endObject()
        writer.member("changes", objects: rows) { writer, row in
            writer.member("change", row.change.description)
            writer.member("capability", row.capability)
            Self.writeScenarios(of: row, to: &writer)
        }
        // Only when a membership changes, so that a diff without one prints as before.
        if !workspaceRows.isEmpty {
            writer.key("workspaceVerdicts")
            writer.beginObject()
            for (workspace, verdict) in workspaceVerdicts { writer.member(workspace, verdict.description) }
            writer.endObject()
            writer.member("workspaceScenarios", number: workspaceScenarioCount)
            writer.member("workspaceChanges", objects: workspaceRows) { writer, row in
                writer.member("workspace", row.workspace)
                writer.member("oldRole", row.oldRole?.rawValue ?? "none")
                writer.member("newRole", row.newRole?.rawValue ?? "none")
                Self.writeScenarios(of: row, to: &writer)
            }
        }
        writer.endObject()
        return writer.string
    }

    /// A row's class of scenarios: `environment`, `groupType`, `groupId`, `roles`, `entitlements`
    /// and the `example`.
    private static func writeScenarios(of row: some ScenarioClassRow, to writer: inout JSONWriter) {
        writer.member("environment", row.environment?.rawValue ?? "*")
        writer.member("groupType", row.groupType ?? "*")
        writer.member("groupId", row.groupID ?? "*")
        writer.member("roles", objects: row.roles) { writer, entry in
            writer.member("productId", entry.productID ?? "*")
            writer.member("role", entry.role ?? "*")
        }
        writer.member("entitlements", strings: row.entitlements)
        writer.key("example")
        writer.beginObject()
        writer.key("context")
        row.example.writeContext(to: &writer)
        writer.key("response")
        row.example.response.write(to: &writer)
        writer.endObject()
    }
}
