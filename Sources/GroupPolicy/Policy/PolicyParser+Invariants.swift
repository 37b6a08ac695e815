import GroupPolicyBasics

/// The `invariants` section.
extension PolicyParser {
    func parseInvariants(_ node: JSONNode, _ path: JSONPath) -> [InvariantDefinition] {
        sectionDefinitions(.invariants, of: node, path) { invariantPath, element, fields, id in
            let description = fields.optionalString("description")
            let never = fields["never"]
            let always = fields["always"]
            let quantifier: InvariantDefinition.Quantifier
            let bodyNode: JSONNode
            switch (never, always) {
            case (let node?, nil):
                quantifier = .never
                bodyNode = node
            case (nil, let node?):
                quantifier = .always
                bodyNode = node
            case (.some, .some(let node)):
                collector.error(
                    .invalidValue,
                    at: node.offset,
                    invariantPath.appending("always"),
                    "an invariant has exactly one of 'never' and 'always', not both"
                )
                return nil
            case (nil, nil):
                collector.error(
                    .missingKey,
                    at: element.offset,
                    invariantPath.appending("never"),
                    "missing required key: an invariant needs one of 'never' or 'always'"
                )
                return nil
            }
            let bodyPath = invariantPath.appending(quantifier.rawValue)
            guard let body = collector.object(bodyNode, bodyPath, allowed: Keys.invariantBody) else {
                return nil
            }
            let (capabilities, match, requires) = parseClause(body, bodyPath)
            guard let id else { return nil }
            return InvariantDefinition(
                id: id.value,
                description: description,
                quantifier: quantifier,
                capabilities: capabilities.map(\.value),
                match: match,
                requires: requires,
                offset: element.offset,
                path: invariantPath
            )
        }
    }
}
