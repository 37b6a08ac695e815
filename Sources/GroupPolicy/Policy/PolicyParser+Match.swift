import GroupPolicyBasics

/// A rule's, workspace's or invariant's `match` and `requires`.
extension PolicyParser {
    func parseMatch(_ node: JSONNode, _ path: JSONPath, allowsRole: Bool) -> MatchCondition {
        let keys = Keys.match
        // `role` is a known key even for workspaces, so that it gets its own clear error below.
        guard let fields = collector.object(node, path, allowed: keys) else {
            return .everything
        }
        var match = MatchCondition()
        match.groupTypes = fields["groupType"].flatMap { condition($0, path.appending("groupType"), .groupType) }
        match.groupIDs = fields["groupId"].flatMap { condition($0, path.appending("groupId"), .groupID) }
        match.productIDs = fields["productId"].flatMap { condition($0, path.appending("productId"), .productID) }
        if let roleNode = fields["role"] {
            if allowsRole {
                match.roles = condition(roleNode, path.appending("role"), .role)
            } else {
                collector.error(
                    .roleInWorkspaceMatch,
                    at: roleNode.offset,
                    path.appending("role"),
                    "a workspace match cannot use 'role' (use adminRoles to say who administers it)"
                )
            }
        }
        return match
    }

    enum Attribute {
        case groupType, groupID, productID, role
    }

    /// A string or non-empty array of strings.
    ///
    /// For `productId` and `role`, `"*"` (alone or in the list) is any value. `groupType` and `role`
    /// values this version does not know are warned about.
    func condition(_ node: JSONNode, _ path: JSONPath, _ attribute: Attribute) -> ValueCondition? {
        guard let values = collector.stringOrArray(node, path) else { return nil }
        switch attribute {
        case .productID, .role:
            if values.contains(where: { $0.value == "*" }) { return .any }
        case .groupType, .groupID:
            break
        }
        for value in values {
            switch attribute {
            case .groupType: warnIfUnknown(groupType: value)
            case .role: warnIfUnknown(role: value)
            case .groupID, .productID: break
            }
        }
        return .oneOf(Self.unique(values.map(\.value)))
    }

    /// The values in first-seen order without repeats, compared by their bytes (two spellings
    /// `String` calls equal are two values; see ``Swift/String/isExactly(_:)``), in linear time: a
    /// match may list thousands.
    static func unique(_ values: [String]) -> [String] {
        // Most lists hold one value or a few: compare those in place, without hashing copies.
        guard values.count > 8 else {
            guard values.count > 1 else { return values }
            var result: [String] = []
            result.reserveCapacity(values.count)
            for value in values where !result.contains(where: { $0.isExactly(value) }) { result.append(value) }
            return result
        }
        // By bytes, without a copy of each value (lists of millions of names are within the limits).
        var seen = ByteInterner()
        return values.filter { value in
            let before = seen.count
            _ = seen.insert(value)
            return seen.count > before
        }
    }

    func warnIfUnknown(groupType value: Located<String>) {
        guard !GroupType(rawValue: value.value).isKnown else { return }
        let hint =
            value.value == "*"
            ? "'*' is not a wildcard for groupType (omit groupType to match every group)"
            : "groupType '\(value.value)' is not one this version knows (ORGANIZATION, CONSUMER); it matches only groups of exactly that type"
        collector.warning(.unknownEnumValue, at: value.offset, value.path, hint)
    }

    func warnIfUnknown(role value: Located<String>) {
        guard !Role(rawValue: value.value).isKnown else { return }
        collector.warning(
            .unknownEnumValue,
            at: value.offset,
            value.path,
            "role '\(value.value)' is not one this version knows (ADMIN, NONE); it matches only entries with exactly that role"
        )
    }

    func parseRequires(_ node: JSONNode, _ path: JSONPath) -> Requirements {
        guard let fields = collector.object(node, path, allowed: Keys.requires) else { return .none }
        var requires = Requirements()
        if let environmentNode = fields["environment"],
            let values = collector.stringOrArray(environmentNode, path.appending("environment"))
        {
            var environments: Set<StoreEnvironment> = []
            for value in values {
                if let environment = StoreEnvironment(rawValue: value.value) {
                    environments.insert(environment)
                } else {
                    collector.error(
                        .invalidValue,
                        at: value.offset,
                        value.path,
                        "unknown environment '\(value.value)' (expected 'Production' or 'Sandbox')"
                    )
                }
            }
            requires.environments = environments
        }
        if let entitlementsNode = fields["entitlements"],
            let values = collector.stringArray(entitlementsNode, path.appending("entitlements"), minimumCount: 1)
        {
            requires.entitlements = Self.unique(values.map(\.value))
        }
        return requires
    }
}
