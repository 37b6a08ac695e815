import GroupPolicyBasics

/// The `workspaces` section.
extension PolicyParser {
    func parseWorkspaces(_ node: JSONNode, _ path: JSONPath) -> [WorkspaceDefinition] {
        let elements = sectionElements(
            of: node,
            path,
            section: "workspaces",
            maximum: limits.maximumWorkspaces,
            earlier: earlier?.workspaces
        )
        var workspaces: [WorkspaceDefinition] = []
        var seen: [String: Int] = [:]
        for (index, element) in elements.enumerated() {
            let workspacePath = path.appending(index)
            let keys = Keys.workspace
            guard let fields = collector.object(element, workspacePath, allowed: keys) else { continue }
            let located = elementID(
                fields,
                workspacePath,
                index: index,
                kind: "workspace",
                section: "workspaces",
                seen: &seen
            )
            let description = fields.optionalString("description")
            let match =
                fields["match"].map { parseMatch($0, workspacePath.appending("match"), allowsRole: false) }
                ?? .everything
            var adminRoles = [Role.admin.rawValue]
            if let rolesNode = fields["adminRoles"],
                let values = collector.stringArray(rolesNode, workspacePath.appending("adminRoles"))
            {
                adminRoles = values.map(\.value)
                values.forEach(warnIfUnknown(role:))
            }
            let requires = fields["requires"].map { parseRequires($0, workspacePath.appending("requires")) } ?? .none
            guard let located else { continue }
            workspaces.append(
                WorkspaceDefinition(
                    id: located.value,
                    description: description,
                    match: match,
                    adminRoles: adminRoles,
                    requires: requires,
                    offset: element.offset,
                    path: workspacePath,
                    idOffset: located.offset
                )
            )
        }
        return workspaces
    }
}
