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
}
