import GroupPolicyBasics

/// The `capabilities` section, and the check that every capability a rule or invariant names is declared.
extension PolicyParser {
    func parseCapabilities(_ node: JSONNode, _ path: JSONPath) -> [CapabilityDeclaration] {
        guard case .object(let members) = node.value else {
            collector.error(.wrongType, at: node.offset, path, "expected an object, found \(node.value.typeName)")
            return []
        }
        if members.isEmpty {
            collector.error(.invalidValue, at: node.offset, path, "declare at least one capability")
            return []
        }
        guard within(limits.maximumCapabilities, members.count, earlier: nil, "capabilities", node, path) else {
            return []
        }
        var declarations: [CapabilityDeclaration] = []
        for member in members {
            let memberPath = path.appending(member.key)
            if !Self.isValidCapabilityName(member.key) {
                collector.error(
                    .invalidValue,
                    at: member.keyOffset,
                    memberPath,
                    "invalid capability name '\(member.key)' (a letter, then up to 127 of A-Z a-z 0-9 . _ -)"
                )
            }
            var kind = CapabilityKind.presentation
            var description: String?
            switch member.value.value {
            case .string(let text):
                description = text
            case .object:
                guard let fields = collector.object(member.value, memberPath, allowed: Keys.capability) else {
                    continue
                }
                description = fields.optionalString("description")
                kind =
                    rawValue(
                        fields,
                        "kind",
                        memberPath,
                        name: "capability kind",
                        expected: "'presentation' or 'content'"
                    )
                    ?? kind
            default:
                collector.error(
                    .wrongType,
                    at: member.value.offset,
                    memberPath,
                    "expected a description string or an object, found \(member.value.value.typeName)"
                )
            }
            declarations.append(
                CapabilityDeclaration(name: member.key, description: description, kind: kind, offset: member.keyOffset)
            )
        }
        return declarations
    }

    /// Checks that every name is declared, suggesting the closest declared name for a typo.
    func checkDeclared(_ names: [Located<String>]) {
        for name in names where declared[name.value] == nil {
            let suggestion =
                Suggestion.closest(
                    to: name.value,
                    among: collector.suggestions.sortedCandidates(declared.keys),
                    budget: collector.suggestions
                )
                .map { " (did you mean '\($0)'?)" } ?? ""
            collector.error(
                .undeclaredCapability,
                at: name.offset,
                name.path,
                "undeclared capability '\(name.value)'\(suggestion)"
            )
        }
    }
}
