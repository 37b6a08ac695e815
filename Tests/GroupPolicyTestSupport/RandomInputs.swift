package import GroupPolicy

/// A small deterministic generator (SplitMix64), so every random test is reproducible by seed.
package struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random but valid policies, responses and contexts over small vocabularies, so that rules,
/// groups and entries collide often.
package struct RandomInputs {
    package var generator: SeededGenerator

    package static let products = ["p0", "p1", "p2", "p3", "example.productId.one", "example.productId.two"]
    package static let roles = ["ADMIN", "NONE", "MEMBER", "OWNER"]
    package static let types = ["ORGANIZATION", "CONSUMER", "ENTERPRISE"]
    package static let groupIDs = ["g0", "g1", "g2", "900000000000000000"]
    package static let entitlements = ["e0", "e1", "e2"]

    /// A larger product vocabulary whose ids straddle the interning's length boundaries (4, 7, 8,
    /// 15, 16 and 17 bytes and beyond), for policies with many products.
    package static let manyProducts =
        products + (0..<30).map { "p\($0 + 10)" } + [
            "abcdefg", "abcdefgh", "abcdefghijklmno", "abcdefghijklmnop", "abcdefghijklmnopq",
            "abcdefghijklmnopqrstuvwxyz.0123", "com.example.product.monthly", "com.example.product.yearly",
            "com.example.product.yearlz", "\u{e9}t\u{e9}.pro",
        ]
    /// Many group ids, a few repeated, of different lengths.
    package static let manyGroupIDs =
        groupIDs + (0..<40).map { "group-\($0)" } + ["123456789012345678", "12345678901234567"]

    /// The product ids policies and responses draw from.
    package var products = Self.products
    /// The group ids responses draw from.
    package var groupIDs = Self.groupIDs
    /// How many groups a response has.
    package var groupCount = 0...5
    /// How many rules a policy has.
    package var ruleCount = 0...14
    /// The entitlements rules require and contexts hold.
    package var entitlements = Self.entitlements
    /// How often a rule has a `requires`.
    package var requiresChance = 0.3

    package init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

    package mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &generator) < probability
    }
    package mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }
    package mutating func pick<T>(_ values: [T]) -> T { values[int(0...(values.count - 1))] }

    package mutating func subset(_ values: [String], atLeast minimum: Int = 1) -> [String] {
        var chosen = values.filter { _ in chance(0.4) }
        while chosen.count < minimum { chosen.append(pick(values)) }
        return chosen
    }

    package mutating func jsonList(_ values: [String]) -> String {
        "[" + values.map { "\"\($0)\"" }.joined(separator: ",") + "]"
    }

    package mutating func condition(_ pool: [String], wildcard: Bool) -> String {
        if wildcard && chance(0.15) { return "\"*\"" }
        if chance(0.5) { return "\"\(pick(pool))\"" }
        return jsonList(subset(pool))
    }

    package mutating func requires() -> (json: String, entitlements: Bool)? {
        guard chance(requiresChance) else { return nil }
        var parts: [String] = []
        if chance(0.5) { parts.append(#""environment": \#(condition(["Production", "Sandbox"], wildcard: false))"#) }
        let withEntitlements = chance(0.5)
        if withEntitlements { parts.append(#""entitlements": \#(jsonList(subset(entitlements)))"#) }
        return ("{" + parts.joined(separator: ",") + "}", withEntitlements)
    }

    /// A policy document's JSON: capabilities `c0...`, some of kind content.
    package mutating func policyJSON(id: String, capabilityCount: Int, contentEvery: Int) -> String {
        let capabilities = (0..<capabilityCount).map { "c\($0)" }
        let declarations = capabilities.enumerated().map { index, name in
            index % contentEvery == contentEvery - 1
                ? #""\#(name)": { "kind": "content" }"# : #""\#(name)": "\#(name)""#
        }
        var rules: [String] = []
        for index in 0..<int(ruleCount) {
            var parts = [#""id": "r\#(index)""#]
            let deny = chance(0.3)
            if deny { parts.append(#""effect": "deny""#) }
            let granted = (0..<int(1...3)).map { _ in pick(capabilities) }
            parts.append(#""capabilities": \#(jsonList(granted))"#)
            var match: [String] = []
            if chance(0.4) { match.append(#""groupType": \#(condition(Self.types, wildcard: false))"#) }
            if chance(0.2) { match.append(#""groupId": \#(condition(groupIDs, wildcard: false))"#) }
            if chance(0.5) { match.append(#""productId": \#(condition(products, wildcard: true))"#) }
            if chance(0.5) { match.append(#""role": \#(condition(Self.roles, wildcard: true))"#) }
            if !match.isEmpty { parts.append(#""match": {\#(match.joined(separator: ","))}"#) }
            var requirement = requires()
            let grantsContent = granted.contains { name in
                (capabilities.firstIndex(of: name) ?? 0) % contentEvery == contentEvery - 1
            }
            if !deny && grantsContent && !(requirement?.entitlements ?? false) {
                requirement = (#"{"entitlements": \#(jsonList(subset(entitlements)))}"#, true)
            }
            if let requirement { parts.append(#""requires": \#(requirement.json)"#) }
            rules.append("{" + parts.joined(separator: ",") + "}")
        }
        var workspaces: [String] = []
        for index in 0..<int(0...3) {
            var parts = [#""id": "\#(id)-w\#(index)""#]
            var match: [String] = []
            if chance(0.5) { match.append(#""groupType": \#(condition(Self.types, wildcard: false))"#) }
            if chance(0.2) { match.append(#""groupId": \#(condition(groupIDs, wildcard: false))"#) }
            if chance(0.5) { match.append(#""productId": \#(condition(products, wildcard: true))"#) }
            if !match.isEmpty { parts.append(#""match": {\#(match.joined(separator: ","))}"#) }
            if chance(0.3) { parts.append(#""adminRoles": \#(jsonList(subset(Self.roles, atLeast: 0)))"#) }
            if let requirement = requires() { parts.append(#""requires": \#(requirement.json)"#) }
            workspaces.append("{" + parts.joined(separator: ",") + "}")
        }
        let aliases =
            chance(0.5) ? #", "sandbox": { "productAliases": { "example.productId.one": "p0", "p3": "p1" } }"# : ""
        return """
            { "format": "group-policy/v1", "id": "\(id)",
              "capabilities": { \(declarations.joined(separator: ", ")) },
              "rules": [\(rules.joined(separator: ",\n"))],
              "workspaces": [\(workspaces.joined(separator: ","))]\(aliases) }
            """
    }

    package mutating func response() -> GetCustomerGroupsResponse {
        GetCustomerGroupsResponse(
            groups: (0..<int(groupCount)).map { _ in
                GroupEntry(
                    groupID: pick(groupIDs),
                    groupType: GroupType(pick(Self.types)),
                    roles: (0..<int(0...4)).map { _ in
                        RoleEntry(productID: pick(products), role: Role(pick(Self.roles)))
                    }
                )
            }
        )
    }

    package mutating func context() -> EvaluationContext {
        EvaluationContext(
            environment: chance(0.5) ? .production : .sandbox,
            entitlements: Set(entitlements.filter { _ in chance(0.5) })
        )
    }
}
