/// The `rules` section.
extension PolicyParser {
    func parseRules(_ node: JSONNode, _ path: JSONPath) -> [RuleDefinition] {
        sectionDefinitions(
            of: node,
            path,
            section: "rules",
            kind: "rule",
            keys: Keys.rule,
            maximum: limits.maximumRules,
            earlier: earlier?.rules
        ) { rulePath, element, fields, id in
            let description = fields.optionalString("description")
            let effect: RuleEffect =
                rawValue(fields, "effect", rulePath, name: "effect", expected: "'grant' or 'deny'") ?? .grant
            var capabilities: [Located<String>] = []
            if let capabilitiesNode = fields.required("capabilities"),
                let names = collector.stringArray(capabilitiesNode, rulePath.appending("capabilities"), minimumCount: 1)
            {
                capabilities = names
                checkDeclared(names)
            }
            let match =
                fields["match"].map { parseMatch($0, rulePath.appending("match"), allowsRole: true) } ?? .everything
            let requires = fields["requires"].map { parseRequires($0, rulePath.appending("requires")) } ?? .none
            if effect == .grant, requires.entitlements.isEmpty {
                for name in capabilities where declared[name.value] == .content {
                    collector.error(
                        .contentWithoutEntitlements,
                        at: name.offset,
                        name.path,
                        "content capability '\(name.value)' granted without requires.entitlements (membership is not entitlement)"
                    )
                }
            }
            guard let id else { return nil }
            return RuleDefinition(
                id: id.value,
                description: description,
                effect: effect,
                capabilities: capabilities.map(\.value),
                match: match,
                requires: requires,
                offset: element.offset,
                path: rulePath
            )
        }
    }
}
