import GroupPolicyBasics

/// The `workspaces` section.
extension PolicyParser {
    func parseWorkspaces(_ node: JSONNode, _ path: JSONPath) -> [WorkspaceDefinition] {
        sectionDefinitions(.workspaces, of: node, path) { workspacePath, element, fields, located in
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
            let requires = parseRequires(fields, workspacePath)
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
