import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Explaining one capability: each outcome, each kind of unmet condition, the order of near misses,
/// the JSON and the text, with exact expected values.
@Suite struct ExplanationTests {
    static let team = """
        { "format": "group-policy/v1", "id": "team",
          "capabilities": { "seats": "Manage seats", "view": "View", "export": "Export", "unused": "Never granted" },
          "rules": [
            { "id": "admins-manage", "match": { "groupType": "ORGANIZATION", "productId": "pro", "role": "ADMIN" },
              "capabilities": ["seats"] },
            { "id": "beta-groups", "match": { "groupId": ["g-beta", "g-gamma"] },
              "requires": { "environment": "Sandbox", "entitlements": ["beta", "pro"] }, "capabilities": ["seats"] },
            { "id": "everyone-views", "match": { "role": "*" }, "capabilities": ["view", "export"] },
            { "id": "no-export-in-sandbox", "effect": "deny", "requires": { "environment": "Sandbox" },
              "capabilities": ["export"] }
          ],
          "sandbox": { "productAliases": { "sandbox.pro": "pro" } } }
        """

    static func loaded() throws -> Policy { try policy(team) }

    static func group(_ id: String, _ type: GroupType = .organization, _ roles: [(String, Role)] = []) -> GroupEntry {
        GroupEntry(groupID: id, groupType: type, roles: roles.map { RoleEntry(productID: $0.0, role: $0.1) })
    }

    @Test func aMissingRoleIsTheNearestMissAndEveryUnmetConditionIsListed() throws {
        let response = GetCustomerGroupsResponse(groups: [Self.group("1", .organization, [("pro", .unassigned)])])
        let explanation = try Self.loaded().explain("seats", for: response)
        #expect(explanation.hasGrantRules)
        #expect(
            explanation.groups == [
                Explanation.Group(
                    groupID: "1",
                    groupType: .organization,
                    outcome: .notGranted,
                    nearMisses: [
                        Explanation.NearMiss(
                            rule: "admins-manage",
                            unmet: [
                                .roleEntry(
                                    productIDs: ["pro"],
                                    roles: ["ADMIN"],
                                    actual: [RoleEntry(productID: "pro", role: .unassigned)]
                                )
                            ]
                        ),
                        Explanation.NearMiss(
                            rule: "beta-groups",
                            unmet: [
                                .groupID(expected: ["g-beta", "g-gamma"], actual: "1"),
                                .environment(expected: [.sandbox], actual: .production),
                                .entitlements(missing: ["beta", "pro"]),
                            ]
                        ),
                    ]
                )
            ]
        )
    }

    @Test func aConsumerGroupHasNoRoleEntriesAndTheWrongType() throws {
        let response = GetCustomerGroupsResponse(groups: [Self.group("c", .consumer)])
        let context = EvaluationContext(environment: .sandbox, entitlements: ["pro"])
        let explanation = try Self.loaded().explain("seats", for: response, in: context)
        #expect(
            explanation.groups.first?.nearMisses == [
                Explanation.NearMiss(
                    rule: "admins-manage",
                    unmet: [
                        .groupType(expected: ["ORGANIZATION"], actual: .consumer),
                        .roleEntry(productIDs: ["pro"], roles: ["ADMIN"], actual: []),
                    ]
                ),
                Explanation.NearMiss(
                    rule: "beta-groups",
                    unmet: [
                        .groupID(expected: ["g-beta", "g-gamma"], actual: "c"),
                        .entitlements(missing: ["beta"]),
                    ]
                ),
            ]
        )
        // Two unmet conditions each: rule order breaks the tie.
        #expect(explanation.groups.first?.nearMisses.map(\.rule) == ["admins-manage", "beta-groups"])
    }

    @Test func aGrantedCapabilityHasItsGrantsAndNoNearMisses() throws {
        let response = GetCustomerGroupsResponse(groups: [
            Self.group("1", .organization, [("other", .admin), ("pro", .admin)])
        ])
        let explanation = try Self.loaded().explain("seats", for: response)
        #expect(
            explanation.groups == [
                Explanation.Group(
                    groupID: "1",
                    groupType: .organization,
                    outcome: .granted,
                    grants: [
                        Grant(capability: "seats", groupID: "1", rule: "admins-manage", productID: "pro", role: .admin)
                    ]
                )
            ]
        )
    }

    @Test func aDeniedCapabilityHasTheGrantsThatMatchedAndTheDenyRules() throws {
        let response = GetCustomerGroupsResponse(groups: [Self.group("1", .organization, [("pro", .unassigned)])])
        let explanation = try Self.loaded().explain("export", for: response, in: sandbox)
        #expect(
            explanation.groups == [
                Explanation.Group(
                    groupID: "1",
                    groupType: .organization,
                    outcome: .denied,
                    grants: [
                        Grant(
                            capability: "export",
                            groupID: "1",
                            rule: "everyone-views",
                            productID: "pro",
                            role: .unassigned
                        )
                    ],
                    denials: [Denial(capability: "export", groupID: "1", rule: "no-export-in-sandbox")]
                )
            ]
        )
        #expect(try Self.loaded().explain("export", for: response).groups.first?.outcome == .granted)
    }

    @Test func theSandboxPlaceholderIsIgnoredInProductionOnly() throws {
        let placeholder = GetCustomerGroupsResponse.sandboxPlaceholder
        let production = try Self.loaded().explain("view", for: placeholder)
        #expect(
            production.groups == [
                Explanation.Group(groupID: "900000000000000000", groupType: .organization, outcome: .ignored)
            ]
        )
        let inSandbox = try Self.loaded().explain("view", for: placeholder, in: sandbox)
        #expect(inSandbox.groups.first?.outcome == .granted)
        #expect(inSandbox.groups.first?.grants.map(\.productID) == ["example.productId.one", "example.productId.two"])
    }

    @Test func sandboxAliasesApplyToGrantsAndToTheEntriesANearMissShows() throws {
        let admin = GetCustomerGroupsResponse(groups: [Self.group("1", .organization, [("sandbox.pro", .admin)])])
        #expect(
            try Self.loaded().explain("seats", for: admin, in: sandbox).groups.first?.grants == [
                Grant(
                    capability: "seats",
                    groupID: "1",
                    rule: "admins-manage",
                    productID: "pro",
                    role: .admin,
                    sandboxProductID: "sandbox.pro"
                )
            ]
        )
        // In Production the alias does not apply: the entry is seen as sent.
        #expect(
            try Self.loaded().explain("seats", for: admin).groups.first?.nearMisses.first
                == Explanation.NearMiss(
                    rule: "admins-manage",
                    unmet: [
                        .roleEntry(
                            productIDs: ["pro"],
                            roles: ["ADMIN"],
                            actual: [RoleEntry(productID: "sandbox.pro", role: .admin)]
                        )
                    ]
                )
        )
        let seat = GetCustomerGroupsResponse(groups: [Self.group("1", .organization, [("sandbox.pro", .unassigned)])])
        #expect(
            try Self.loaded().explain("seats", for: seat, in: sandbox).groups.first?.nearMisses.first?.unmet == [
                .roleEntry(
                    productIDs: ["pro"],
                    roles: ["ADMIN"],
                    actual: [RoleEntry(productID: "pro", role: .unassigned)]
                )
            ]
        )
    }

    @Test func aWildcardPrintsAsAStarAndTheExplanationPrintsExactly() throws {
        let response = GetCustomerGroupsResponse(groups: [Self.group("c", .consumer)])
        let explanation = try Self.loaded().explain("view", for: response)
        #expect(
            explanation.groups.first?.nearMisses == [
                Explanation.NearMiss(
                    rule: "everyone-views",
                    unmet: [.roleEntry(productIDs: nil, roles: nil, actual: [])]
                )
            ]
        )
        #expect(
            explanation.jsonString() == """
                {
                  "capability": "view",
                  "groups": [
                    {
                      "groupId": "c",
                      "groupType": "CONSUMER",
                      "outcome": "notGranted",
                      "grants": [],
                      "denials": [],
                      "nearMisses": [
                        {
                          "rule": "everyone-views",
                          "unmet": [
                            {
                              "condition": "roleEntry",
                              "productId": "*",
                              "role": "*",
                              "actual": []
                            }
                          ]
                        }
                      ]
                    }
                  ]
                }
                """
        )
    }

    @Test func everyConditionPrintsInTheDocumentedShape() throws {
        let response = GetCustomerGroupsResponse(groups: [
            Self.group("c", .consumer), Self.group("1", .organization, [("pro", .unassigned)]),
        ])
        let explanation = try Self.loaded().explain("seats", for: response)
        #expect(
            explanation.jsonString(pretty: false)
                == #"{"capability":"seats","groups":["#
                + #"{"groupId":"c","groupType":"CONSUMER","outcome":"notGranted","grants":[],"denials":[],"nearMisses":["#
                + #"{"rule":"admins-manage","unmet":[{"condition":"groupType","expected":["ORGANIZATION"],"actual":"CONSUMER"},"#
                + #"{"condition":"roleEntry","productId":["pro"],"role":["ADMIN"],"actual":[]}]},"#
                + #"{"rule":"beta-groups","unmet":[{"condition":"groupId","expected":["g-beta","g-gamma"],"actual":"c"},"#
                + #"{"condition":"environment","expected":"Sandbox","actual":"Production"},"#
                + #"{"condition":"entitlements","missing":["beta","pro"]}]}]},"#
                + #"{"groupId":"1","groupType":"ORGANIZATION","outcome":"notGranted","grants":[],"denials":[],"nearMisses":["#
                + #"{"rule":"admins-manage","unmet":[{"condition":"roleEntry","productId":["pro"],"role":["ADMIN"],"#
                + #""actual":[{"productId":"pro","role":"NONE"}]}]},"#
                + #"{"rule":"beta-groups","unmet":[{"condition":"groupId","expected":["g-beta","g-gamma"],"actual":"1"},"#
                + #"{"condition":"environment","expected":"Sandbox","actual":"Production"},"#
                + #"{"condition":"entitlements","missing":["beta","pro"]}]}]}]}"#
        )
        let granted = try Self.loaded().explain(
            "export",
            for: GetCustomerGroupsResponse(groups: [Self.group("1", .organization, [("sandbox.pro", .admin)])]),
            in: sandbox
        )
        #expect(
            granted.jsonString(pretty: false)
                == #"{"capability":"export","groups":[{"groupId":"1","groupType":"ORGANIZATION","outcome":"denied","#
                + #""grants":[{"capability":"export","groupId":"1","rule":"everyone-views","productId":"pro","#
                + #""sandboxProductId":"sandbox.pro","role":"ADMIN"}],"#
                + #""denials":[{"capability":"export","groupId":"1","rule":"no-export-in-sandbox"}],"nearMisses":[]}]}"#
        )
    }

    @Test func theTextIsOneParagraphPerGroupNearestMissFirst() throws {
        let response = GetCustomerGroupsResponse(groups: [
            Self.group("1", .organization, [("pro", .unassigned), ("plus", .admin)]),
            Self.group("c", .consumer),
            Self.group("2", .organization, [("pro", .admin)]),
            GroupEntry(groupID: "900000000000000000", groupType: .organization),
        ])
        #expect(
            try Self.loaded().explain("seats", for: response, in: EvaluationContext(entitlements: ["pro"])).text == """
                capability seats: granted in 1 of 4 groups

                group 1 (ORGANIZATION): not granted: rule 'admins-manage' needs role ADMIN for pro; this group has NONE
                  or rule 'beta-groups' needs group g-beta or g-gamma; this is group 1, and needs environment Sandbox; the context is Production, and needs entitlement beta; the context lacks it

                group c (CONSUMER): not granted: rule 'admins-manage' needs group type ORGANIZATION; this group is CONSUMER, and needs role ADMIN for pro; this group has no role entries
                  or rule 'beta-groups' needs group g-beta or g-gamma; this is group c, and needs environment Sandbox; the context is Production, and needs entitlement beta; the context lacks it

                group 2 (ORGANIZATION): granted by rule 'admins-manage' through pro ADMIN

                group 900000000000000000 (ORGANIZATION): ignored: Apple's sandbox placeholder gets nothing in Production
                """
        )
        #expect(
            try Self.loaded().explain("export", for: response, in: sandbox, group: "2").text == """
                capability export: granted in 0 of 1 group

                group 2 (ORGANIZATION): denied by rule 'no-export-in-sandbox' (granted by rule 'everyone-views' through pro ADMIN)
                """
        )
    }

    @Test func aCapabilityNoRuleGrantsSaysSo() throws {
        let response = GetCustomerGroupsResponse(groups: [Self.group("1", .organization, [("pro", .admin)])])
        let explanation = try Self.loaded().explain("unused", for: response)
        #expect(!explanation.hasGrantRules)
        #expect(explanation.groups == [Explanation.Group(groupID: "1", groupType: .organization, outcome: .notGranted)])
        #expect(
            explanation.text == """
                capability unused: no rule of the policy grants it

                group 1 (ORGANIZATION): not granted: no rule grants unused
                """
        )
        #expect(
            try Self.loaded().explain("view", for: GetCustomerGroupsResponse(groups: [])).text
                == "capability view: the response has no groups"
        )
    }

    @Test func anUndeclaredCapabilityThrowsWithADidYouMean() throws {
        let response = GetCustomerGroupsResponse(groups: [])
        #expect {
            try Self.loaded().explain("seat", for: response)
        } throws: { error in
            let error = error as? GroupPolicyError
            return error?.code == .undeclaredCapability
                && error?.message == "undeclared capability 'seat' (did you mean 'seats'?)"
        }
        #expect {
            try Self.loaded().explain("workspace.manage", for: response)
        } throws: { error in
            (error as? GroupPolicyError)?.message == "undeclared capability 'workspace.manage'"
        }
    }

    @Test func oneGroupOnRequestAndAnUnknownGroupThrows() throws {
        let response = GetCustomerGroupsResponse(groups: [
            Self.group("1", .organization, [("pro", .admin)]), Self.group("2", .consumer),
        ])
        let explanation = try Self.loaded().explain("seats", for: response, group: "2")
        #expect(explanation.groups.map(\.groupID) == ["2"])
        #expect(explanation.group("2")?.outcome == .notGranted)
        #expect(explanation.group("1") == nil)
        #expect {
            try Self.loaded().explain("seats", for: response, group: "3")
        } throws: { error in
            let error = error as? GroupPolicyError
            return error?.code == .unknownGroup && error?.message == "the response has no group '3'"
        }
    }

    @Test func aRepeatedGroupIsExplainedOnceWithItsEntriesMerged() throws {
        let response = GetCustomerGroupsResponse(groups: [
            Self.group("1", .organization, [("pro", .unassigned)]),
            Self.group("1", .consumer, [("plus", .admin), ("pro", .unassigned)]),
        ])
        let explanation = try Self.loaded().explain("seats", for: response)
        #expect(explanation.groups.count == 1)
        #expect(
            explanation.groups.first?.nearMisses.first?.unmet == [
                .roleEntry(
                    productIDs: ["pro"],
                    roles: ["ADMIN"],
                    actual: [
                        RoleEntry(productID: "pro", role: .unassigned), RoleEntry(productID: "plus", role: .admin),
                        RoleEntry(productID: "pro", role: .unassigned),
                    ]
                )
            ]
        )
        // Identical entries give one grant, as in the decision.
        let view = try Self.loaded().explain("view", for: response)
        #expect(view.groups.first?.grants.map(\.productID) == ["pro", "plus"])
        #expect(view.groups.first?.grants == Self.loadedDecisionGrants("view", response))
    }

    static func loadedDecisionGrants(_ capability: String, _ response: GetCustomerGroupsResponse) -> [Grant] {
        ((try? loaded())?.evaluate(response).grants ?? []).filter { $0.capability == capability }
    }

    @Test func rulesOfSeveralPoliciesAreQualifiedAndADenyInAnyPolicyRemoves() throws {
        let directory = try makeTemporaryDirectory("explain-set")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(Self.team.utf8).write(to: URL(fileURLWithPath: directory + "/a-team.json"))
        let freeze = """
            { "format": "group-policy/v1", "id": "freeze", "capabilities": { "seats": "Manage seats" },
              "rules": [ { "id": "frozen", "effect": "deny", "match": { "groupId": "1" }, "capabilities": ["seats"] },
                         { "id": "owners", "match": { "role": "OWNER" }, "capabilities": ["seats"] } ] }
            """
        try Data(freeze.utf8).write(to: URL(fileURLWithPath: directory + "/b-freeze.json"))
        let set = try Policy(contentsOfDirectory: directory)
        let response = GetCustomerGroupsResponse(groups: [
            Self.group("1", .organization, [("pro", .admin)]), Self.group("2", .organization, [("pro", .unassigned)]),
        ])
        let explanation = try set.explain("seats", for: response)
        #expect(
            explanation.groups == [
                Explanation.Group(
                    groupID: "1",
                    groupType: .organization,
                    outcome: .denied,
                    grants: [
                        Grant(
                            capability: "seats",
                            groupID: "1",
                            rule: "team/admins-manage",
                            productID: "pro",
                            role: .admin
                        )
                    ],
                    denials: [Denial(capability: "seats", groupID: "1", rule: "freeze/frozen")]
                ),
                Explanation.Group(
                    groupID: "2",
                    groupType: .organization,
                    outcome: .notGranted,
                    nearMisses: [
                        Explanation.NearMiss(
                            rule: "team/admins-manage",
                            unmet: [
                                .roleEntry(
                                    productIDs: ["pro"],
                                    roles: ["ADMIN"],
                                    actual: [RoleEntry(productID: "pro", role: .unassigned)]
                                )
                            ]
                        ),
                        Explanation.NearMiss(
                            rule: "freeze/owners",
                            unmet: [
                                .roleEntry(
                                    productIDs: nil,
                                    roles: ["OWNER"],
                                    actual: [RoleEntry(productID: "pro", role: .unassigned)]
                                )
                            ]
                        ),
                        Explanation.NearMiss(
                            rule: "team/beta-groups",
                            unmet: [
                                .groupID(expected: ["g-beta", "g-gamma"], actual: "2"),
                                .environment(expected: [.sandbox], actual: .production),
                                .entitlements(missing: ["beta", "pro"]),
                            ]
                        ),
                    ]
                ),
            ]
        )
    }

    @Test func thePolicyStoreExplainsWithItsCurrentVersion() throws {
        let directory = try makeTemporaryDirectory("explain-store")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(Self.team.utf8).write(to: URL(fileURLWithPath: directory + "/team.json"))
        let store = try PolicyStore(contentsOf: directory)
        let response = GetCustomerGroupsResponse(groups: [Self.group("1", .organization, [("pro", .admin)])])
        #expect(try store.explain("seats", for: response) == store.current.explain("seats", for: response))
        #expect(try store.explain("seats", for: response, group: "1").groups.first?.outcome == .granted)
    }
}
