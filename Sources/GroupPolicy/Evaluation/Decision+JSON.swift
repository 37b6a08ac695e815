extension Decision {
    /// The decision as the DocC article "Decision JSON" documents it: keys in the documented order
    /// (`capabilities`, `groups`, `workspaces`, [`grants`, `denials`,] `notes`), then, only when
    /// known, `groupsSource`, `groupsFetchedAt` and `policyRevision`; capability lists sorted,
    /// pretty with two-space indentation or compact.
    ///
    /// - Parameters:
    ///   - includingProvenance: Whether to include `grants` and `denials` (the CLI's `--explain`).
    ///   - pretty: Pretty (the CLI's output) or compact.
    /// - Returns: The JSON text, without a trailing newline.
    public func jsonString(includingProvenance: Bool = false, pretty: Bool = true) -> String {
        String(decoding: jsonBytes(includingProvenance: includingProvenance, pretty: pretty), as: UTF8.self)
    }

    /// The decision's JSON as UTF-8 bytes (see ``jsonString(includingProvenance:pretty:)``).
    public func jsonBytes(includingProvenance: Bool = false, pretty: Bool = true) -> [UInt8] {
        var writer = JSONWriter(pretty: pretty, reservingCapacity: 512)
        writer.beginObject()
        writer.member("capabilities", strings: capabilities)
        writer.key("groups")
        writer.beginArray()
        for group in groups {
            writer.beginObject()
            writer.member("groupId", group.groupID)
            writer.member("groupType", group.groupType.rawValue)
            writer.member("capabilities", strings: group.capabilities)
            writer.endObject()
        }
        writer.endArray()
        writer.key("workspaces")
        writer.beginArray()
        for membership in workspaces {
            writer.beginObject()
            writer.member("workspace", membership.workspace.id)
            writer.member("groupId", membership.groupID)
            writer.member("role", membership.role.rawValue)
            writer.endObject()
        }
        writer.endArray()
        if includingProvenance {
            writer.key("grants")
            writer.beginArray()
            for grant in grants { writer.grant(grant) }
            writer.endArray()
            writer.key("denials")
            writer.beginArray()
            for denial in denials { writer.denial(denial) }
            writer.endArray()
        }
        writer.member("notes", strings: notes)
        if let groupsSource { writer.member("groupsSource", groupsSource.name) }
        if let groupsFetchedAt { writer.member("groupsFetchedAt", Timestamp.rfc3339(groupsFetchedAt)) }
        if let policyRevision { writer.member("policyRevision", policyRevision) }
        writer.endObject()
        return writer.output
    }
}
