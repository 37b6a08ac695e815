import GroupPolicyBasics

/// The `sandbox` section: product aliases.
extension PolicyParser {
    func parseSandbox(_ node: JSONNode, _ path: JSONPath) -> [String: String] {
        guard let fields = collector.object(node, path, allowed: Keys.sandbox) else { return [:] }
        guard let aliasesNode = fields["productAliases"] else { return [:] }
        let aliasesPath = path.appending("productAliases")
        guard case .object(let members) = aliasesNode.value else {
            collector.error(
                .wrongType,
                at: aliasesNode.offset,
                aliasesPath,
                "expected an object of product id to product id, found \(aliasesNode.value.typeName)"
            )
            return [:]
        }
        // An alias is two names.
        let counted = collector.countListedValues(
            2 * members.count,
            at: { members[$0 / 2].value.offset },
            { aliasesPath.appending(members[$0 / 2].key) }
        )
        guard counted else { return [:] }
        var aliases: [String: String] = [:]
        for member in members {
            if let target = collector.string(member.value, aliasesPath.appending(member.key)) {
                aliases[member.key] = target
            }
        }
        return aliases
    }
}
