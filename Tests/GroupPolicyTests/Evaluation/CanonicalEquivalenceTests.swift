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

    /// A grant through any ADMIN entry, removed by a deny through any MEMBER entry.
    private static let mergePolicyJSON = """
        {"format": "group-policy/v1", "id": "merge", "capabilities": {"pro.view": "x"},
         "rules": [
           {"id": "admins", "capabilities": ["pro.view"], "match": {"productId": "*", "role": "ADMIN"}},
           {"id": "no-members", "effect": "deny", "capabilities": ["pro.view"],
            "match": {"productId": "*", "role": "MEMBER"}}
         ]}
        """
    private static let precomposed = "caf\u{e9}"
    private static let decomposed = "cafe\u{301}"

    /// Two groups whose ids `String` calls equal are two groups: not merged (which would let the
    /// second group's deny remove the first group's grant), and each found by its own bytes.
    @Test func groupsWithCanonicallyEquivalentIDsAreTwoGroups() throws {
        let policy = try Policy(jsonBytes: Array(Self.mergePolicyJSON.utf8))
        let response = GetCustomerGroupsResponse(groups: [
            GroupEntry(
                groupID: Self.precomposed,
                groupType: .organization,
                roles: [RoleEntry(productID: "p", role: .admin)]
            ),
            GroupEntry(
                groupID: Self.decomposed,
                groupType: .consumer,
                roles: [RoleEntry(productID: "p", role: "MEMBER")]
            ),
        ])
        let decision = policy.evaluate(response)
        #expect(decision.groupCount == 2)
        #expect(
            decision.groups.map { Array($0.groupID.utf8) } == [
                Array(Self.precomposed.utf8), Array(Self.decomposed.utf8),
            ]
        )
        #expect(decision.notes == [])
        #expect(decision.capabilities.names == ["pro.view"])
        #expect(policy.capabilities(for: response).names == ["pro.view"])
        #expect(decision.allows("pro.view", inGroup: Self.precomposed))
        #expect(!decision.allows("pro.view", inGroup: Self.decomposed))
        #expect(decision.capabilities(inGroup: Self.precomposed)?.names == ["pro.view"])
        #expect(decision.capabilities(inGroup: Self.decomposed)?.names == [])
        #expect(decision.grants.map { Array($0.groupID.utf8) } == [Array(Self.precomposed.utf8)])
        #expect(decision.denials == [])

        let granted = try policy.explain("pro.view", for: response, group: Self.precomposed)
        #expect(granted.groups.map(\.outcome) == [.granted])
        #expect(granted.groups.map { Array($0.groupID.utf8) } == [Array(Self.precomposed.utf8)])
        let notGranted = try policy.explain("pro.view", for: response, group: Self.decomposed)
        #expect(notGranted.groups.map(\.outcome) == [.notGranted])
        #expect(notGranted.groups.map { Array($0.groupID.utf8) } == [Array(Self.decomposed.utf8)])
        let both = try policy.explain("pro.view", for: response)
        #expect(both.groups.map(\.outcome) == [.granted, .notGranted])
        #expect(both.group(Self.decomposed)?.outcome == .notGranted)
        #expect(both.group(Self.precomposed)?.outcome == .granted)
    }

    /// Repeats of one spelling merge; the other spelling stays apart, and a lookup by the one
    /// spelling never answers for the other.
    @Test func repeatsOfOneSpellingMergeAndTheOtherStaysApart() throws {
        let policy = try Policy(jsonBytes: Array(Self.mergePolicyJSON.utf8))
        let response = GetCustomerGroupsResponse(groups: [
            GroupEntry(
                groupID: Self.decomposed,
                groupType: .organization,
                roles: [RoleEntry(productID: "p", role: .admin)]
            ),
            GroupEntry(
                groupID: Self.precomposed,
                groupType: .organization,
                roles: [RoleEntry(productID: "q", role: .admin)]
            ),
            GroupEntry(
                groupID: Self.decomposed,
                groupType: .consumer,
                roles: [RoleEntry(productID: "p", role: "MEMBER")]
            ),
        ])
        let decision = policy.evaluate(response)
        #expect(
            decision.groups.map { Array($0.groupID.utf8) } == [
                Array(Self.decomposed.utf8), Array(Self.precomposed.utf8),
            ]
        )
        #expect(!decision.allows("pro.view", inGroup: Self.decomposed))
        #expect(decision.allows("pro.view", inGroup: Self.precomposed))
        #expect(
            decision.notes == [
                "group \(Self.decomposed) appears 2 times with conflicting groupType (ORGANIZATION, CONSUMER); its "
                    + "role entries were merged and the first groupType, ORGANIZATION, applies"
            ]
        )
        #expect(decision.denials.map { Array($0.groupID.utf8) } == [Array(Self.decomposed.utf8)])
        #expect(policy.capabilities(for: response).names == ["pro.view"])
        let explanation = try policy.explain("pro.view", for: response, group: Self.decomposed)
        #expect(explanation.groups.map(\.outcome) == [.denied])
    }

    /// Role entries whose product ids `String` calls equal are two entries: each yields its grant,
    /// in the decision and in the explanation.
    @Test func entriesWithCanonicallyEquivalentProductsYieldTwoGrants() throws {
        let policy = try Policy(jsonBytes: Array(Self.mergePolicyJSON.utf8))
        let response = GetCustomerGroupsResponse(groups: [
            GroupEntry(
                groupID: "1",
                groupType: .organization,
                roles: [
                    RoleEntry(productID: Self.precomposed, role: .admin),
                    RoleEntry(productID: Self.decomposed, role: .admin),
                    RoleEntry(productID: Self.precomposed, role: .admin),
                ]
            )
        ])
        let decision = policy.evaluate(response)
        let products = decision.grants.map { Array(($0.productID ?? "").utf8) }
        #expect(products == [Array(Self.precomposed.utf8), Array(Self.decomposed.utf8)])
        let explanation = try policy.explain("pro.view", for: response)
        #expect(explanation.groups.first?.grants.map { Array(($0.productID ?? "").utf8) } == products)
    }

    /// A sandbox alias from one spelling to the other changes the product id's bytes: the grant
    /// names both, in the Decision's grants, its JSON and the explanation.
    @Test func anAliasBetweenTheTwoSpellingsIsNamedInTheGrant() throws {
        let json = """
            {"format": "group-policy/v1", "id": "alias", "capabilities": {"pro.view": "x"},
             "rules": [{"id": "r", "capabilities": ["pro.view"], "match": {"productId": "caf\\u00e9", "role": "*"}}],
             "sandbox": {"productAliases": {"cafe\\u0301": "caf\\u00e9"}}}
            """
        let policy = try Policy(jsonBytes: Array(json.utf8))
        let response = GetCustomerGroupsResponse(groups: [
            GroupEntry(
                groupID: "1",
                groupType: .organization,
                roles: [RoleEntry(productID: Self.decomposed, role: .admin)]
            )
        ])
        let sandbox = EvaluationContext(environment: .sandbox)
        let decision = policy.evaluate(response, in: sandbox)
        let grant = try #require(decision.grants.first)
        #expect(decision.grants.count == 1)
        #expect(Array((grant.productID ?? "").utf8) == Array(Self.precomposed.utf8))
        #expect(Array((grant.sandboxProductID ?? "").utf8) == Array(Self.decomposed.utf8))
        let text = String(decoding: decision.jsonBytes(includingProvenance: true, pretty: false), as: UTF8.self)
        #expect(
            Array(text.utf8).split(separator: UInt8(ascii: ",")).contains {
                $0.elementsEqual(Array("\"sandboxProductId\":\"\(Self.decomposed)\"".utf8))
            }
        )
        let explained = try policy.explain("pro.view", for: response, in: sandbox)
        #expect(
            explained.groups.first?.grants.first.map { Array(($0.sandboxProductID ?? "").utf8) }
                == Array(Self.decomposed.utf8)
        )
    }
}
