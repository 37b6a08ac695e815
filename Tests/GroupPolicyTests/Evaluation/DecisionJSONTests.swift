import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

/// The DocC article "Decision JSON": the Decision's JSON, byte for byte.
@Suite struct DecisionJSONTests {
    @Test func explainedDecisionInTheDocumentedShape() throws {
        let loaded = try Policy(contentsOfFile: repositoryFile("Policies/team-workspace.json"))
        let decision = loaded.evaluate(
            GetCustomerGroupsResponse.sandboxPlaceholder,
            in: EvaluationContext(environment: .sandbox)
        )
        let expected = """
            {
              "capabilities": [
                "workspace.manage-seats",
                "workspace.manage-settings",
                "workspace.members",
                "workspace.view"
              ],
              "groups": [
                {
                  "groupId": "900000000000000000",
                  "groupType": "ORGANIZATION",
                  "capabilities": [
                    "workspace.manage-seats",
                    "workspace.manage-settings",
                    "workspace.members",
                    "workspace.view"
                  ]
                }
              ],
              "workspaces": [
                {
                  "workspace": "team",
                  "groupId": "900000000000000000",
                  "role": "admin"
                }
              ],
              "grants": [
                {
                  "capability": "workspace.manage-seats",
                  "groupId": "900000000000000000",
                  "rule": "pro-admins-manage",
                  "productId": "com.example.teams.pro",
                  "sandboxProductId": "example.productId.one",
                  "role": "ADMIN"
                },
                {
                  "capability": "workspace.manage-settings",
                  "groupId": "900000000000000000",
                  "rule": "pro-admins-manage",
                  "productId": "com.example.teams.pro",
                  "sandboxProductId": "example.productId.one",
                  "role": "ADMIN"
                },
                {
                  "capability": "workspace.members",
                  "groupId": "900000000000000000",
                  "rule": "seat-holders-view",
                  "productId": "com.example.teams.pro",
                  "sandboxProductId": "example.productId.one",
                  "role": "ADMIN"
                },
                {
                  "capability": "workspace.members",
                  "groupId": "900000000000000000",
                  "rule": "seat-holders-view",
                  "productId": "com.example.teams.plus",
                  "sandboxProductId": "example.productId.two",
                  "role": "NONE"
                },
                {
                  "capability": "workspace.view",
                  "groupId": "900000000000000000",
                  "rule": "seat-holders-view",
                  "productId": "com.example.teams.pro",
                  "sandboxProductId": "example.productId.one",
                  "role": "ADMIN"
                },
                {
                  "capability": "workspace.view",
                  "groupId": "900000000000000000",
                  "rule": "seat-holders-view",
                  "productId": "com.example.teams.plus",
                  "sandboxProductId": "example.productId.two",
                  "role": "NONE"
                }
              ],
              "denials": [
                {
                  "capability": "workspace.export",
                  "groupId": "900000000000000000",
                  "rule": "no-export-in-sandbox"
                }
              ],
              "notes": []
            }
            """
        #expect(decision.jsonString(includingProvenance: true) == expected)
    }

    @Test func withoutExplainGrantsAndDenialsAreLeftOut() throws {
        let loaded = try Policy(contentsOfFile: repositoryFile("Policies/team-workspace.json"))
        let decision = loaded.evaluate(GetCustomerGroupsResponse.sandboxPlaceholder)
        #expect(
            decision.jsonString(pretty: false)
                == #"{"capabilities":[],"groups":[{"groupId":"900000000000000000","groupType":"ORGANIZATION","capabilities":[]}],"workspaces":[],"notes":["group 900000000000000000 is Apple's sandbox placeholder; it is ignored in Production (no capabilities, no workspace)"]}"#
        )
    }

    @Test func groupLevelGrantsCarryNoProductOrRole() throws {
        let loaded = try policy(capabilities: ["view"], rules: #"[ { "id": "r\"1\\", "capabilities": ["view"] } ]"#)
        let decision = loaded.evaluate(try response(#"{"groups":[{"groupId":"1","groupType":"CONSUMER"}]}"#))
        #expect(
            decision.jsonString(includingProvenance: true, pretty: false)
                == #"{"capabilities":["view"],"groups":[{"groupId":"1","groupType":"CONSUMER","capabilities":["view"]}],"workspaces":[],"grants":[{"capability":"view","groupId":"1","rule":"r\"1\\"}],"denials":[],"notes":[]}"#
        )
    }
}
