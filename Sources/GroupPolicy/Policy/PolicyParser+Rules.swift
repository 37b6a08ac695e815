import GroupPolicyBasics

/// The `rules` section.
extension PolicyParser {
    func parseRules(_ node: JSONNode, _ path: JSONPath) -> [RuleDefinition] {
        let elements = sectionElements(
            of: node,
            path,
            section: "rules",
            maximum: limits.maximumRules,
            earlier: earlier?.rules
        )
        var rules: [RuleDefinition] = []
        var seen: [String: Int] = [:]
        for (index, element) in elements.enumerated() {
            let rulePath = path.appending(index)
            let keys = Keys.rule
            guard let fields = collector.object(element, rulePath, allowed: keys) else { continue }
            let id = elementID(fields, rulePath, index: index, kind: "rule", section: "rules", seen: &seen)?.value
            let description = fields.optionalString("description")
            var effect = RuleEffect.grant
            if let effectNode = fields["effect"], let raw = collector.string(effectNode, rulePath.appending("effect")) {
                if let parsed = RuleEffect(rawValue: raw) {
                    effect = parsed
                } else {
                    collector.error(
                        .invalidValue,
                        at: effectNode.offset,
                        rulePath.appending("effect"),
                        "unknown effect '\(raw)' (expected 'grant' or 'deny')"
                    )
                }
            }
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
            guard let id else { continue }
            rules.append(
                RuleDefinition(
                    id: id,
                    description: description,
                    effect: effect,
                    capabilities: capabilities.map(\.value),
                    match: match,
                    requires: requires,
                    offset: element.offset,
                    path: rulePath
                )
            )
        }
        return rules
    }
}
