/// The `workspaces` section.
extension PolicyParser {
    func parseWorkspaces(_ node: JSONNode, _ path: JSONPath) -> [WorkspaceDefinition] {
        sectionDefinitions(
            of: node,
            path,
            section: "workspaces",
            kind: "workspace",
            keys: Keys.workspace,
            maximum: limits.maximumWorkspaces,
            earlier: earlier?.workspaces
        ) { workspacePath, element, fields, located in
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
            guard let located else { return nil }
            return WorkspaceDefinition(
                id: located.value,
                description: description,
                match: match,
                adminRoles: adminRoles,
                requires: requires,
                offset: element.offset,
                path: workspacePath,
                idOffset: located.offset
            )
        }
    }
}
