import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

/// The DocC article "Evaluation semantics", rule by rule, with exact expected values.
@Suite struct EvaluationTests {
    static let twoGroups = """
        {"groups":[
          {"groupId":"A","groupType":"ORGANIZATION","roles":[{"productId":"pro","role":"ADMIN"}]},
          {"groupId":"B","groupType":"ORGANIZATION","roles":[{"productId":"pro","role":"NONE"}]}
        ]}
        """

    /// 2.1, 2.3: grants are scoped to their group; the customer's set is the union.
    @Test func grantsAreScopedToTheirGroupAndTheCustomerGetsTheUnion() throws {
        let loaded = try policy(
            capabilities: ["manage", "view"],
            rules: """
                [ { "id": "admins", "match": { "productId": "pro", "role": "ADMIN" }, "capabilities": ["manage"] },
                  { "id": "seats", "match": { "productId": "pro", "role": "NONE" }, "capabilities": ["view"] } ]
                """
        )
        let decision = loaded.evaluate(try response(Self.twoGroups))
        #expect(decision.capabilities.names == ["manage", "view"])
        #expect(decision.groups.map(\.groupID) == ["A", "B"])
        #expect(decision.groups.map(\.capabilities.names) == [["manage"], ["view"]])
        #expect(decision.allows("manage"))
        #expect(decision.allows("manage", inGroup: "A"))
        #expect(!decision.allows("manage", inGroup: "B"))
        #expect(!decision.allows("manage", inGroup: "C"))
        #expect(decision.capabilities(inGroup: "C") == nil)
        #expect(loaded.capabilities(for: try response(Self.twoGroups)).names == ["manage", "view"])
    }

    /// 2.2: deny wins, and a deny matched through one role entry removes the capability from the
    /// whole group, however it was granted.
    @Test func aDenyThroughAnyRoleEntryRemovesTheCapabilityFromTheWholeGroup() throws {
        let loaded = try policy(
            capabilities: ["manage", "view"],
            rules: """
                [ { "id": "admins", "match": { "productId": "pro", "role": "ADMIN" }, "capabilities": ["manage", "view"] },
                  { "id": "no-manage-with-basic", "effect": "deny", "match": { "productId": "basic" }, "capabilities": ["manage"] } ]
                """
        )
        let decision = loaded.evaluate(
            try response(
                """
                {"groups":[
                  {"groupId":"A","groupType":"ORGANIZATION","roles":[{"productId":"pro","role":"ADMIN"},{"productId":"basic","role":"NONE"}]},
                  {"groupId":"B","groupType":"ORGANIZATION","roles":[{"productId":"pro","role":"ADMIN"}]}
                ]}
                """
            )
        )
        #expect(decision.groups.map(\.capabilities.names) == [["view"], ["manage", "view"]])
        #expect(decision.capabilities.names == ["manage", "view"])
        #expect(decision.denials == [Denial(capability: "manage", groupID: "A", rule: "no-manage-with-basic")])
    }

    /// 2.2: a group-level deny removes role-level grants too.
    @Test func aGroupLevelDenyRemovesRoleLevelGrants() throws {
        let loaded = try policy(
            capabilities: ["manage"],
            rules: """
                [ { "id": "deny-all", "effect": "deny", "capabilities": ["manage"] },
                  { "id": "admins", "match": { "role": "ADMIN" }, "capabilities": ["manage"] } ]
                """
        )
        #expect(loaded.evaluate(try response(Self.twoGroups)).capabilities.names == [])
    }

    /// 2.2: nothing is granted by default.
    @Test func nothingIsGrantedByDefault() throws {
        let loaded = try policy(capabilities: ["view"], rules: "[]")
        let decision = loaded.evaluate(try response(Self.twoGroups))
        #expect(decision.capabilities.isEmpty)
        #expect(decision.groups.map(\.capabilities.names) == [[], []])
        #expect(decision.grants == [])
        #expect(decision.denials == [])
    }

    /// 2.2: the order of rules, groups and role entries never changes the result.
    @Test func orderNeverChangesTheResult() throws {
        let rules = [
            #"{ "id": "a", "match": { "role": "ADMIN" }, "capabilities": ["manage", "view"] }"#,
            #"{ "id": "b", "effect": "deny", "match": { "productId": "basic" }, "capabilities": ["manage"] }"#,
            #"{ "id": "c", "match": { "groupType": "CONSUMER" }, "capabilities": ["view"] }"#,
        ]
        let groups = [
            #"{"groupId":"A","groupType":"ORGANIZATION","roles":[{"productId":"pro","role":"ADMIN"},{"productId":"basic","role":"NONE"}]}"#,
            #"{"groupId":"B","groupType":"ORGANIZATION","roles":[{"productId":"basic","role":"NONE"},{"productId":"pro","role":"ADMIN"}]}"#,
            #"{"groupId":"C","groupType":"CONSUMER"}"#,
            #"{"groupId":"D","groupType":"ORGANIZATION","roles":[{"productId":"pro","role":"ADMIN"}]}"#,
        ]
        func perGroup(_ ruleOrder: [Int], _ groupOrder: [Int]) throws -> [String: [String]] {
            let loaded = try policy(
                capabilities: ["manage", "view"],
                rules: "[" + ruleOrder.map { rules[$0] }.joined(separator: ",") + "]"
            )
            let decision = loaded.evaluate(
                try response(#"{"groups":["# + groupOrder.map { groups[$0] }.joined(separator: ",") + "]}")
            )
            return Dictionary(uniqueKeysWithValues: decision.groups.map { ($0.groupID, $0.capabilities.names) })
        }
        let expected = ["A": ["view"], "B": ["view"], "C": ["view"], "D": ["manage", "view"]]
        for ruleOrder in [[0, 1, 2], [2, 1, 0], [1, 0, 2]] {
            for groupOrder in [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]] {
                #expect(try perGroup(ruleOrder, groupOrder) == expected)
            }
        }
    }

    /// 2.4 and section 4: provenance names the rule and, for role-level rules, each role entry it
    /// matched through; group-level grants carry no product or role.
    @Test func provenanceNamesRulesAndRoleEntries() throws {
        let loaded = try policy(
            capabilities: ["view", "badge"],
            rules: """
                [ { "id": "seats", "match": { "productId": "*", "role": "*" }, "capabilities": ["view"] },
                  { "id": "everyone", "capabilities": ["badge", "view"] } ]
                """
        )
        let decision = loaded.evaluate(
            try response(
                #"{"groups":[{"groupId":"A","groupType":"ORGANIZATION","roles":[{"productId":"p1","role":"ADMIN"},{"productId":"p2","role":"NONE"}]}]}"#
            )
        )
        #expect(
            decision.grants == [
                Grant(capability: "badge", groupID: "A", rule: "everyone"),
                Grant(capability: "view", groupID: "A", rule: "seats", productID: "p1", role: .admin),
                Grant(capability: "view", groupID: "A", rule: "seats", productID: "p2", role: .unassigned),
                Grant(capability: "view", groupID: "A", rule: "everyone"),
            ]
        )
    }

    /// Section 4: denials list a (capability, group, deny rule) only where the capability would
    /// otherwise have been granted in that group.
    @Test func denialsOnlyWhereTheCapabilityWouldHaveBeenGranted() throws {
        let loaded = try policy(
            capabilities: ["view", "export"],
            rules: """
                [ { "id": "admins", "match": { "groupId": "A" }, "capabilities": ["view", "export"] },
                  { "id": "no-export", "effect": "deny", "capabilities": ["export", "view"] },
                  { "id": "no-export-2", "effect": "deny", "match": { "productId": "pro" }, "capabilities": ["export"] } ]
                """
        )
        let decision = loaded.evaluate(try response(Self.twoGroups))
        #expect(decision.capabilities.isEmpty)
        #expect(
            decision.denials == [
                Denial(capability: "export", groupID: "A", rule: "no-export"),
                Denial(capability: "export", groupID: "A", rule: "no-export-2"),
                Denial(capability: "view", groupID: "A", rule: "no-export"),
            ]
        )
    }

    /// 2.5: in the sandbox, aliased products match the rules' products; provenance keeps both.
    @Test func sandboxAliasesApplyInTheSandboxOnly() throws {
        let loaded = try policy(
            capabilities: ["manage"],
            rules:
                #"[ { "id": "admins", "match": { "productId": "com.example.pro", "role": "ADMIN" }, "capabilities": ["manage"] } ]"#,
            extra: #""sandbox": { "productAliases": { "example.productId.one": "com.example.pro" } }"#
        )
        let sandboxResponse = try response(
            #"{"groups":[{"groupId":"1","groupType":"ORGANIZATION","roles":[{"productId":"example.productId.one","role":"ADMIN"}]}]}"#
        )
        let inSandbox = loaded.evaluate(sandboxResponse, in: sandbox)
        #expect(inSandbox.capabilities.names == ["manage"])
        #expect(
            inSandbox.grants == [
                Grant(
                    capability: "manage",
                    groupID: "1",
                    rule: "admins",
                    productID: "com.example.pro",
                    role: .admin,
                    sandboxProductID: "example.productId.one"
                )
            ]
        )
        #expect(loaded.evaluate(sandboxResponse, in: production).capabilities.isEmpty)
        // An alias source is replaced in the sandbox: a rule naming the source itself no longer sees it.
        let direct = try policy(
            capabilities: ["manage"],
            rules: #"[ { "id": "r", "match": { "productId": "example.productId.one" }, "capabilities": ["manage"] } ]"#,
            extra: #""sandbox": { "productAliases": { "example.productId.one": "com.example.pro" } }"#
        )
        #expect(direct.evaluate(sandboxResponse, in: sandbox).capabilities.isEmpty)
        #expect(direct.evaluate(sandboxResponse, in: production).capabilities.names == ["manage"])
    }

    /// 2.5: Apple's documented placeholder response in both environments.
    @Test func applesPlaceholderResponseInBothEnvironments() throws {
        let loaded = try Policy(contentsOfFile: repositoryFile("Policies/team-workspace.json"))
        let placeholder = GetCustomerGroupsResponse.sandboxPlaceholder

        let inProduction = loaded.evaluate(placeholder, in: production)
        #expect(inProduction.capabilities.isEmpty)
        #expect(inProduction.groups.map(\.groupID) == ["900000000000000000"])
        #expect(inProduction.groups[0].capabilities.isEmpty)
        #expect(inProduction.workspaces == [])
        #expect(inProduction.grants == [])
        #expect(
            inProduction.notes == [
                "group 900000000000000000 is Apple's sandbox placeholder; it is ignored in Production (no capabilities, no workspace)"
            ]
        )
        #expect(loaded.capabilities(for: placeholder, in: production).isEmpty)

        let inSandbox = loaded.evaluate(placeholder, in: sandbox)
        #expect(
            inSandbox.capabilities.names == [
                "workspace.manage-seats", "workspace.manage-settings", "workspace.members", "workspace.view",
            ]
        )
        #expect(
            inSandbox.workspaces == [
                WorkspaceMembership(workspace: "team", groupID: "900000000000000000", role: .admin)
            ]
        )
        #expect(
            inSandbox.denials == [
                Denial(capability: "workspace.export", groupID: "900000000000000000", rule: "no-export-in-sandbox")
            ]
        )
        #expect(inSandbox.notes == [])
        #expect(loaded.capabilities(for: placeholder, in: sandbox) == inSandbox.capabilities)
    }

    /// 2.6: duplicate group ids merge their role entries; the first type wins; a conflict is noted.
    @Test func duplicateGroupsAreMerged() throws {
        let loaded = try policy(
            capabilities: ["manage", "view"],
            rules: """
                [ { "id": "admins", "match": { "groupType": "ORGANIZATION", "productId": "pro", "role": "ADMIN" }, "capabilities": ["manage", "view"] },
                  { "id": "basic-deny", "effect": "deny", "match": { "productId": "basic" }, "capabilities": ["manage"] } ]
                """
        )
        let merged = try response(
            """
            {"groups":[
              {"groupId":"A","groupType":"ORGANIZATION","roles":[{"productId":"pro","role":"ADMIN"}]},
              {"groupId":"B","groupType":"CONSUMER"},
              {"groupId":"A","groupType":"CONSUMER","roles":[{"productId":"basic","role":"NONE"}]}
            ]}
            """
        )
        let decision = loaded.evaluate(merged)
        #expect(decision.groups.map(\.groupID) == ["A", "B"])
        #expect(decision.groups.map(\.groupType) == [.organization, .consumer])
        #expect(decision.groups.map(\.capabilities.names) == [["view"], []])
        #expect(
            decision.notes == [
                "group A appears 2 times with conflicting groupType (ORGANIZATION, CONSUMER); its role entries were merged and the first groupType, ORGANIZATION, applies"
            ]
        )
        #expect(loaded.capabilities(for: merged).names == ["view"])

        let sameType = try response(
            """
            {"groups":[
              {"groupId":"A","groupType":"ORGANIZATION","roles":[{"productId":"pro","role":"ADMIN"}]},
              {"groupId":"A","groupType":"ORGANIZATION","roles":[{"productId":"pro","role":"ADMIN"}]}
            ]}
            """
        )
        let sameDecision = loaded.evaluate(sameType)
        #expect(sameDecision.notes == [])
        #expect(sameDecision.groups.count == 1)
        #expect(sameDecision.grants.count == 2)  // one per capability: identical entries yield one grant
    }

    /// 2.7: content capabilities come only through entitlements the app verified.
    @Test func contentCapabilitiesNeedEntitlements() throws {
        let loaded = try policy(
            """
            { "format": "group-policy/v1", "id": "p",
              "capabilities": { "templates": { "kind": "content" }, "view": "View" },
              "rules": [ { "id": "t", "match": { "productId": "pro" }, "requires": { "entitlements": ["pro", "extra"] }, "capabilities": ["templates", "view"] } ] }
            """
        )
        let seat = try response(
            #"{"groups":[{"groupId":"A","groupType":"ORGANIZATION","roles":[{"productId":"pro","role":"ADMIN"}]}]}"#
        )
        #expect(loaded.evaluate(seat).capabilities.isEmpty)
        #expect(loaded.evaluate(seat, in: EvaluationContext(entitlements: ["pro"])).capabilities.isEmpty)
        #expect(
            loaded.evaluate(seat, in: EvaluationContext(entitlements: ["pro", "extra", "other"])).capabilities.names
                == ["templates", "view"]
        )
        #expect(loaded.kind(of: "templates") == .content)
    }

    @Test func requiresEnvironmentHolds() throws {
        let loaded = try policy(
            capabilities: ["beta"],
            rules: #"[ { "id": "b", "requires": { "environment": ["Sandbox"] }, "capabilities": ["beta"] } ]"#
        )
        let any = try response(#"{"groups":[{"groupId":"A","groupType":"CONSUMER"}]}"#)
        #expect(loaded.evaluate(any, in: sandbox).capabilities.names == ["beta"])
        #expect(loaded.evaluate(any, in: production).capabilities.names == [])
    }

    /// Section 1: values Apple adds later match only `"*"` or a rule that lists them verbatim.
    @Test func unknownRolesAndGroupTypesMatchOnlyWildcardsOrVerbatim() throws {
        let loaded = try policy(
            capabilities: ["any-role", "admin", "owner", "org", "any-type", "enterprise"],
            rules: """
                [ { "id": "1", "match": { "role": "*" }, "capabilities": ["any-role"] },
                  { "id": "2", "match": { "role": ["ADMIN", "NONE"] }, "capabilities": ["admin"] },
                  { "id": "3", "match": { "role": "OWNER" }, "capabilities": ["owner"] },
                  { "id": "4", "match": { "groupType": ["ORGANIZATION", "CONSUMER"] }, "capabilities": ["org"] },
                  { "id": "5", "capabilities": ["any-type"] },
                  { "id": "6", "match": { "groupType": "ENTERPRISE" }, "capabilities": ["enterprise"] } ]
                """
        )
        let decision = loaded.evaluate(
            try response(
                #"{"groups":[{"groupId":"A","groupType":"ENTERPRISE","roles":[{"productId":"p","role":"OWNER"}]}]}"#
            )
        )
        #expect(decision.capabilities.names == ["any-role", "any-type", "enterprise", "owner"])
    }

    /// Section 1: a CONSUMER group has no role entries, so role-level rules never match it, while
    /// group-level rules do.
    @Test func consumerGroupsNeverSatisfyRoleLevelMatches() throws {
        let loaded = try policy(
            capabilities: ["role-level", "group-level"],
            rules: """
                [ { "id": "r", "match": { "groupType": "CONSUMER", "role": "*" }, "capabilities": ["role-level"] },
                  { "id": "g", "match": { "groupType": "CONSUMER" }, "capabilities": ["group-level"] } ]
                """
        )
        #expect(loaded.warnings.map(\.kind) == [.unreachableConsumerRule])
        let decision = loaded.evaluate(try response(#"{"groups":[{"groupId":"C","groupType":"CONSUMER"}]}"#))
        #expect(decision.capabilities.names == ["group-level"])
    }

    @Test func groupIDConditionsMatchExactly() throws {
        let loaded = try policy(
            capabilities: ["pilot", "pilot-admin"],
            rules: """
                [ { "id": "pilot", "match": { "groupId": ["A", "Z"] }, "capabilities": ["pilot"] },
                  { "id": "pilot-admin", "match": { "groupId": "A", "role": "ADMIN" }, "capabilities": ["pilot-admin"] } ]
                """
        )
        let decision = loaded.evaluate(try response(Self.twoGroups))
        #expect(decision.groups.map(\.capabilities.names) == [["pilot", "pilot-admin"], []])
        #expect(loaded.capabilities(for: try response(Self.twoGroups)).names == ["pilot", "pilot-admin"])
    }

    @Test func emptyGroupsGiveAnEmptyDecision() throws {
        let loaded = try Policy(contentsOfFile: repositoryFile("Policies/team-workspace.json"))
        let decision = loaded.evaluate(try response(#"{"groups":[]}"#))
        #expect(decision.capabilities.isEmpty)
        #expect(decision.groups == [])
        #expect(decision.workspaces == [])
        #expect(decision.notes == [])
        #expect(
            decision.jsonString()
                == """
                {
                  "capabilities": [],
                  "groups": [],
                  "workspaces": [],
                  "notes": []
                }
                """
        )
    }

    @Test func aPolicySetDeniesAcrossPolicies() throws {
        let grantFile = """
            { "format": "group-policy/v1", "id": "grants", "capabilities": { "export": "Export" },
              "rules": [ { "id": "g", "capabilities": ["export"] } ] }
            """
        let denyFile = """
            { "format": "group-policy/v1", "id": "denies", "capabilities": { "export": "Export" },
              "rules": [ { "id": "d", "effect": "deny", "requires": { "environment": "Sandbox" }, "capabilities": ["export"] } ] }
            """
        let set = Policy(documents: [
            try Policy.parseDocument(bytes(grantFile), fileName: "g.json", limits: .default),
            try Policy.parseDocument(bytes(denyFile), fileName: "d.json", limits: .default),
        ])
        let any = try response(#"{"groups":[{"groupId":"A","groupType":"CONSUMER"}]}"#)
        #expect(set.evaluate(any).grants == [Grant(capability: "export", groupID: "A", rule: "grants/g")])
        #expect(set.evaluate(any, in: sandbox).capabilities.isEmpty)
        #expect(
            set.evaluate(any, in: sandbox).denials == [Denial(capability: "export", groupID: "A", rule: "denies/d")]
        )
        #expect(set.capabilities(for: any, in: sandbox).isEmpty)
    }

    @Test func policiesWithMoreThan64CapabilitiesUseWideBitSets() throws {
        let names = (0..<130).map { "c\($0)" }
        let loaded = try policy(
            capabilities: names,
            rules: """
                [ { "id": "all", "capabilities": [\(names.map { "\"\($0)\"" }.joined(separator: ","))] },
                  { "id": "deny", "effect": "deny", "match": { "role": "NONE" }, "capabilities": ["c129", "c64", "c3"] } ]
                """
        )
        let decision = loaded.evaluate(try response(Self.twoGroups))
        #expect(decision.groups[0].capabilities.count == 130)
        #expect(decision.groups[1].capabilities.count == 127)
        #expect(!decision.allows("c129", inGroup: "B"))
        #expect(decision.allows("c129", inGroup: "A"))
        #expect(loaded.capabilities(for: try response(Self.twoGroups)).count == 130)
    }
}
