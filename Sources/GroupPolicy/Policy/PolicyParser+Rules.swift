import GroupPolicyBasics

/// The `rules` section.
extension PolicyParser {
    func parseRules(_ node: JSONNode, _ path: JSONPath) -> [RuleDefinition] {
        sectionDefinitions(.rules, of: node, path) { rulePath, element, fields, id in
            let description = fields.optionalString("description")
            let effect: RuleEffect =
                rawValue(fields, "effect", rulePath, name: "effect", expected: "'grant' or 'deny'") ?? .grant
            let (capabilities, match, requires) = parseClause(fields, rulePath)
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
