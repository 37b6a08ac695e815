import Testing

@testable import GroupPolicy

/// Match comparisons are exact (byte for byte): two names that Swift's `String` calls equal by
/// Unicode canonical equivalence must not share one interned entry, or a deny naming one of them
/// stops applying to the response that names it exactly.
@Suite struct CanonicalEquivalenceTests {
    /// A rule naming the precomposed "é" and a deny naming the decomposed "e\u{301}".
    private static let policyJSON = """
        {"format": "group-policy/v1", "id": "nfc", "capabilities": {"pro.view": "x", "other": "y"},
         "rules": [
           {"id": "any-product", "capabilities": ["pro.view"], "match": {"productId": "*", "role": "*"}},
           {"id": "precomposed", "capabilities": ["other"], "match": {"productId": "com.example.caf\\u00e9", "role": "*"}},
           {"id": "deny-decomposed", "effect": "deny", "capabilities": ["pro.view"],
            "match": {"productId": "com.example.cafe\\u0301", "role": "*"}}
         ]}
        """

    @Test func denyNamingTheDecomposedProductAppliesToIt() throws {
        let policy = try Policy(jsonBytes: Array(Self.policyJSON.utf8))
        let response = GetCustomerGroupsResponse(groups: [
            GroupEntry(
                groupID: "1",
                groupType: "ORGANIZATION",
                roles: [RoleEntry(productID: "com.example.cafe\u{301}", role: "ADMIN")]
            )
        ])
        let decision = policy.evaluate(response)
        #expect(decision.capabilities.names == [])
        #expect(policy.capabilities(for: response).names == [])
    }

    @Test func groupIDMatchIsExact() throws {
        let json = """
            {"format": "group-policy/v1", "id": "gid", "capabilities": {"pro.view": "x"},
             "rules": [{"id": "r", "capabilities": ["pro.view"], "match": {"groupId": "\\u00e9"}}]}
            """
        let policy = try Policy(jsonBytes: Array(json.utf8))
        let response = GetCustomerGroupsResponse(groups: [
            GroupEntry(groupID: "e\u{301}", groupType: "ORGANIZATION")
        ])
        #expect(policy.evaluate(response).capabilities.names == [])
    }

    /// An entitlement the context holds in one spelling does not satisfy a rule requiring the other.
    @Test func requiredEntitlementsAreExact() throws {
        let json = """
            {"format": "group-policy/v1", "id": "ent", "capabilities": {"pro.view": "x"},
             "rules": [{"id": "r", "capabilities": ["pro.view"], "requires": {"entitlements": ["caf\\u00e9"]}}]}
            """
        let policy = try Policy(jsonBytes: Array(json.utf8))
        let response = GetCustomerGroupsResponse(groups: [GroupEntry(groupID: "1", groupType: "CONSUMER")])
        let decomposed = EvaluationContext(environment: .production, entitlements: ["cafe\u{301}"])
        let precomposed = EvaluationContext(environment: .production, entitlements: ["caf\u{e9}"])
        #expect(policy.evaluate(response, in: decomposed).capabilities.names == [])
        #expect(policy.capabilities(for: response, in: decomposed).names == [])
        #expect(policy.evaluate(response, in: precomposed).capabilities.names == ["pro.view"])
    }

    /// A match listing both spellings keeps both: each matches its own bytes.
    @Test func aMatchListingBothSpellingsMatchesEach() throws {
        let json = """
            {"format": "group-policy/v1", "id": "both", "capabilities": {"pro.view": "x"},
             "rules": [{"id": "r", "capabilities": ["pro.view"],
                        "match": {"productId": ["caf\\u00e9", "cafe\\u0301"], "role": "*"}}]}
            """
        let policy = try Policy(jsonBytes: Array(json.utf8))
        for product in ["caf\u{e9}", "cafe\u{301}"] {
            let response = GetCustomerGroupsResponse(groups: [
                GroupEntry(
                    groupID: "1",
                    groupType: "ORGANIZATION",
                    roles: [RoleEntry(productID: product, role: "NONE")]
                )
            ])
            #expect(policy.evaluate(response).capabilities.names == ["pro.view"])
            #expect(policy.capabilities(for: response).names == ["pro.view"])
        }
    }
}
