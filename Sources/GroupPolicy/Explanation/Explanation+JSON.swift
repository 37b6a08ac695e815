import GroupPolicyBasics

extension Explanation {
    /// The explanation as the CLI's `explain --json` prints it (see the DocC article "Explaining a
    /// decision"): `capability`, then `groups`, each with `groupId`, `groupType`, `outcome`,
    /// `grants`, `denials` and `nearMisses`; pretty with two-space indentation or compact.
    ///
    /// - Parameter pretty: Pretty (the CLI's output) or compact.
    /// - Returns: The JSON text, without a trailing newline.
    public func jsonString(pretty: Bool = true) -> String {
        String(decoding: jsonBytes(pretty: pretty), as: UTF8.self)
    }

    /// The explanation's JSON as UTF-8 bytes (see ``jsonString(pretty:)``).
    public func jsonBytes(pretty: Bool = true) -> [UInt8] {
        var writer = JSONWriter(pretty: pretty, reservingCapacity: 512)
        writer.beginObject()
        writer.member("capability", capability.name)
        writer.member("groups", objects: groups) { writer, group in
            writer.member("groupId", group.groupID)
            writer.member("groupType", group.groupType.rawValue)
            writer.member("outcome", group.outcome.rawValue)
            writer.member("grants", array: group.grants) { $0.grant($1) }
            writer.member("denials", array: group.denials) { $0.denial($1) }
            writer.member("nearMisses", objects: group.nearMisses) { writer, nearMiss in
                writer.member("rule", nearMiss.rule)
                writer.member("unmet", array: nearMiss.unmet) { $0.condition($1) }
            }
        }
        writer.endObject()
        return writer.output
    }
}

extension JSONWriter {
    /// A provenance grant object, as the decision and the explanation print it.
    mutating func grant(_ grant: Grant) {
        beginObject()
        member("capability", grant.capability)
        member("groupId", grant.groupID)
        member("rule", grant.rule)
        if let productID = grant.productID { member("productId", productID) }
        if let sandboxProductID = grant.sandboxProductID { member("sandboxProductId", sandboxProductID) }
        if let role = grant.role { member("role", role.rawValue) }
        endObject()
    }

    /// A provenance denial object, as the decision and the explanation print it.
    mutating func denial(_ denial: Denial) {
        beginObject()
        member("capability", denial.capability)
        member("groupId", denial.groupID)
        member("rule", denial.rule)
        endObject()
    }

    /// An unmet condition: `{"condition": name, ...}` with the condition's own members.
    mutating func condition(_ condition: Explanation.UnmetCondition) {
        beginObject()
        member("condition", condition.name)
        switch condition {
        case .groupType(let expected, let actual):
            member("expected", strings: expected)
            member("actual", actual.rawValue)
        case .groupID(let expected, let actual):
            member("expected", strings: expected)
            member("actual", actual)
        case .roleEntry(let productIDs, let roles, let actual):
            anyOrList("productId", productIDs)
            anyOrList("role", roles)
            key("actual")
            beginArray()
            for entry in actual {
                beginObject()
                member("productId", entry.productID)
                member("role", entry.role.rawValue)
                endObject()
            }
            endArray()
        case .environment(let expected, let actual):
            // Two environments exist, so an unmet condition names exactly one: a plain string.
            if expected.count == 1 {
                member("expected", expected[0].rawValue)
            } else {
                member("expected", strings: expected.map(\.rawValue))
            }
            member("actual", actual.rawValue)
        case .entitlements(let missing):
            member("missing", strings: missing)
        }
        endObject()
    }

    /// `"*"` for any value, otherwise the list.
    private mutating func anyOrList(_ name: String, _ values: [String]?) {
        if let values {
            member(name, strings: values)
        } else {
            member(name, "*")
        }
    }
}
