import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy
@testable import GroupPolicyTooling

/// The DocC article "Policy test file format": the test file format and the Swift API that runs it.
@Suite struct PolicyTestSuiteTests {
    /// The repository's own rule-set tests, run inside `swift test`, one Swift test per file.
    @Test(arguments: ["Policies/team-workspace.tests.json", "Policies/family-sharing.tests.json"])
    func bundledRuleSetsPass(_ file: String) throws {
        let suite = try PolicyTestSuite(contentsOfFile: repositoryFile(file))
        #expect(suite.cases.count >= 7)
        for result in suite.run() {
            #expect(result.passed, "\(result.name): \(result.failures)")
        }
    }

    static let policyPath = repositoryFile("Policies/team-workspace.json")

    static func suite(_ cases: String) throws -> PolicyTestSuite {
        try PolicyTestSuite(
            jsonBytes: bytes(#"{ "format": "group-policy-tests/v1", "cases": \#(cases), "policy": "\#(policyPath)" }"#),
            fileName: "t.tests.json"
        )
    }

    static let admin =
        #"{ "groups": [ { "groupId": "1", "groupType": "ORGANIZATION", "roles": [ { "productId": "com.example.teams.pro", "role": "ADMIN" } ] } ] }"#

    @Test func failuresSayExpectedAndActual() throws {
        let suite = try Self.suite(
            """
            [ { "name": "wrong on purpose", "response": \(Self.admin),
                "expect": {
                  "capabilities": ["workspace.view", "team.templates"],
                  "includes": ["team.templates"],
                  "excludes": ["workspace.export"],
                  "groups": { "1": ["workspace.view"], "2": [] },
                  "workspaces": [ { "workspace": "team", "groupId": "1", "role": "member" } ] } } ]
            """
        )
        let results = suite.run()
        #expect(results.count == 1)
        #expect(!results[0].passed)
        #expect(results[0].location == SourcePosition(file: "t.tests.json", line: 1, column: 49))
        #expect(
            results[0].failures == [
                #"capabilities: expected ["team.templates", "workspace.view"], got ["workspace.export", "workspace.manage-seats", "workspace.manage-settings", "workspace.members", "workspace.view"] (missing ["team.templates"]; unexpected ["workspace.export", "workspace.manage-seats", "workspace.manage-settings", "workspace.members"])"#,
                #"includes: expected 'team.templates' to be granted, got ["workspace.export", "workspace.manage-seats", "workspace.manage-settings", "workspace.members", "workspace.view"]"#,
                "excludes: expected 'workspace.export' not to be granted, but it is (granted by 'pro-admins-manage' in group 1)",
                #"groups["1"]: expected ["workspace.view"], got ["workspace.export", "workspace.manage-seats", "workspace.manage-settings", "workspace.members", "workspace.view"] (unexpected ["workspace.export", "workspace.manage-seats", "workspace.manage-settings", "workspace.members"])"#,
                #"groups["2"]: expected [], but the response has no group '2' (it has ["1"])"#,
                #"workspaces: expected [{"workspace": "team", "groupId": "1", "role": "member"}], got [{"workspace": "team", "groupId": "1", "role": "admin"}]"#,
            ]
        )
    }

    @Test func workspacesCompareIgnoringOrderAndContextDefaultsToProduction() throws {
        let suite = try Self.suite(
            """
            [ { "name": "placeholder", "response": { "groups": [ { "groupId": "900000000000000000", "groupType": "ORGANIZATION",
                  "roles": [ { "productId": "example.productId.one", "role": "ADMIN" } ] } ] },
                "expect": { "capabilities": [], "workspaces": [] } },
              { "name": "two groups", "context": { "environment": "Sandbox" },
                "response": { "groups": [
                  { "groupId": "1", "groupType": "ORGANIZATION", "roles": [ { "productId": "com.example.teams.pro", "role": "ADMIN" } ] },
                  { "groupId": "2", "groupType": "ORGANIZATION", "roles": [ { "productId": "com.example.teams.plus", "role": "NONE" } ] } ] },
                "expect": { "workspaces": [ { "workspace": "team", "groupId": "2", "role": "member" },
                                            { "workspace": "team", "groupId": "1", "role": "admin" } ] } } ]
            """
        )
        #expect(suite.run().map(\.passed) == [true, true])
        #expect(suite.cases[0].context == EvaluationContext(environment: .production, entitlements: []))
    }

    struct BadFile: CustomTestStringConvertible, Sendable {
        var name: String
        var cases: String
        var expected: String
        var testDescription: String { name }
    }

    static let badFiles: [BadFile] = [
        BadFile(
            name: "duplicate case names",
            cases:
                #"[ { "name": "a", "response": { "groups": [] }, "expect": { "capabilities": [] } }, { "name": "a", "response": { "groups": [] }, "expect": { "capabilities": [] } } ]"#,
            expected: "t.tests.json:1:140: error: cases[1].name: duplicate case name 'a' (also cases[0])"
        ),
        BadFile(
            name: "an empty expect",
            cases: #"[ { "name": "a", "response": { "groups": [] }, "expect": {} } ]"#,
            expected:
                "t.tests.json:1:104: error: cases[0].expect: expect needs at least one of capabilities, includes, excludes, groups, workspaces"
        ),
        BadFile(
            name: "both response and responseFile",
            cases:
                #"[ { "name": "a", "response": { "groups": [] }, "responseFile": "x.json", "expect": { "capabilities": [] } } ]"#,
            expected:
                "t.tests.json:1:110: error: cases[0].responseFile: give either 'response' or 'responseFile', not both"
        ),
        BadFile(
            name: "an undeclared capability in excludes",
            cases:
                #"[ { "name": "a", "response": { "groups": [] }, "expect": { "excludes": ["workspace.exprot"] } } ]"#,
            expected:
                "t.tests.json:1:119: error: cases[0].expect.excludes[0]: the policy declares no capability 'workspace.exprot' (did you mean 'workspace.export'?)"
        ),
        BadFile(
            name: "an invalid inline response",
            cases:
                #"[ { "name": "a", "response": { "groups": [ { "groupId": 1 } ] }, "expect": { "capabilities": [] } } ]"#,
            expected:
                "t.tests.json:1:103: error: cases[0].response.groups[0].groupId: invalid response: expected a string, found a number"
        ),
        BadFile(
            name: "an unknown key in a case",
            cases:
                #"[ { "name": "a", "description": "x", "response": { "groups": [] }, "expect": { "capabilities": [] } } ]"#,
            expected:
                "t.tests.json:1:64: error: cases[0].description: unknown key 'description'; allowed: name, context, response, responseFile, expect"
        ),
        BadFile(
            name: "an unknown workspace",
            cases:
                #"[ { "name": "a", "response": { "groups": [] }, "expect": { "workspaces": [ { "workspace": "tem", "groupId": "1", "role": "admin" } ] } } ]"#,
            expected:
                "t.tests.json:1:137: error: cases[0].expect.workspaces[0].workspace: the policy defines no workspace 'tem' (did you mean 'team'?)"
        ),
    ]

    @Test(arguments: badFiles)
    func invalidTestFilesSayWhere(_ file: BadFile) {
        #expect {
            try Self.suite(file.cases)
        } throws: { error in
            let error = error as? GroupPolicyError
            #expect(error?.code == .invalidTestFile)
            #expect(error?.description == file.expected)
            return error?.description == file.expected
        }
    }

    @Test func coverageCountsGrantsDenialsAndMemberships() throws {
        let suite = try Self.suite(
            """
            [ { "name": "admin", "response": \(Self.admin), "expect": { "includes": ["workspace.view"] } },
              { "name": "admin in the sandbox", "context": { "environment": "Sandbox" }, "response": \(Self.admin),
                "expect": { "excludes": ["workspace.export"] } } ]
            """
        )
        let results = suite.run()
        let first = suite.coverage(of: Array(results.prefix(1)))
        #expect(
            first.rules.map(\.id) == [
                "seat-holders-view", "pro-admins-manage", "plus-admins-settings", "no-export-in-sandbox",
                "pro-templates",
            ]
        )
        #expect(first.unexercisedRules.map(\.id) == ["plus-admins-settings", "no-export-in-sandbox", "pro-templates"])
        #expect(first.unexercisedWorkspaces == [])
        // The sandbox case removes the export a Pro admin would get: the deny rule counts.
        let both = suite.coverage(of: results)
        #expect(both.unexercisedRules.map(\.id) == ["plus-admins-settings", "pro-templates"])
        #expect(both.unexercisedRules.first?.location == SourcePosition(file: Self.policyPath, line: 30, column: 5))
        #expect(both.unexercisedRules.first?.jsonPath == "rules[2]")
        // Nothing exercised by no case at all.
        #expect(suite.coverage(of: []).unexercisedWorkspaces.map(\.id) == ["team"])
    }

    @Test func aMissingPolicyIsReported() {
        #expect {
            try PolicyTestSuite(
                jsonBytes: bytes(#"{ "format": "group-policy-tests/v1", "policy": "missing.json", "cases": [] }"#),
                fileName: "dir/t.tests.json"
            )
        } throws: { error in
            (error as? GroupPolicyError)?.description
                == "dir/t.tests.json:1:48: error: policy: policy 'dir/missing.json' does not load: cannot read dir/missing.json: no such file"
        }
    }
}
