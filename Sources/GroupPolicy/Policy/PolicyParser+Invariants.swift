import GroupPolicyBasics

/// The `invariants` section.
extension PolicyParser {
    func parseInvariants(_ node: JSONNode, _ path: JSONPath) -> [InvariantDefinition] {
        let elements = sectionElements(
            of: node,
            path,
            section: "invariants",
            maximum: limits.maximumInvariants,
            earlier: earlier?.invariants
        )
        var invariants: [InvariantDefinition] = []
        var seen: [String: Int] = [:]
        for (index, element) in elements.enumerated() {
            let invariantPath = path.appending(index)
            guard
                let fields = collector.object(
                    element,
                    invariantPath,
                    allowed: Keys.invariant
                )
            else {
                continue
            }
            let id = elementID(
                fields,
                invariantPath,
                index: index,
                kind: "invariant",
                section: "invariants",
                seen: &seen
            )?
            .value
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
                continue
            case (nil, nil):
                collector.error(
                    .missingKey,
                    at: element.offset,
                    invariantPath.appending("never"),
                    "missing required key: an invariant needs one of 'never' or 'always'"
                )
                continue
            }
            let bodyPath = invariantPath.appending(quantifier.rawValue)
            guard let body = collector.object(bodyNode, bodyPath, allowed: Keys.invariantBody) else {
                continue
            }
            var capabilities: [String] = []
            if let capabilitiesNode = body.required("capabilities"),
                let names = collector.stringArray(capabilitiesNode, bodyPath.appending("capabilities"), minimumCount: 1)
            {
                capabilities = names.map(\.value)
                checkDeclared(names)
            }
            let match =
                body["match"].map { parseMatch($0, bodyPath.appending("match"), allowsRole: true) } ?? .everything
            let requires = body["requires"].map { parseRequires($0, bodyPath.appending("requires")) } ?? .none
            guard let id else { continue }
            invariants.append(
                InvariantDefinition(
                    id: id,
                    description: description,
                    quantifier: quantifier,
                    capabilities: capabilities,
                    match: match,
                    requires: requires,
                    offset: element.offset,
                    path: invariantPath
                )
            )
        }
        return invariants
    }
}
