import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Every load-time error and warning of the DocC article "Policy file format", section "Load-time
/// validation", with its exact location.
@Suite struct PolicyLoadingTests {
    /// A valid policy whose lines are easy to count; tests replace one line.
    static func document(
        rules: String = #"[ { "id": "r1", "capabilities": ["workspace.view"] } ]"#,
        capabilities: String = #"{ "workspace.view": "View", "workspace.manage": "Manage" }"#,
        extra: String = ""
    ) -> String {
        """
        {
          "format": "group-policy/v1",
          "id": "team",
          "capabilities": \(capabilities),
          "rules": \(rules)\(extra.isEmpty ? "" : ",\n  " + extra)
        }
        """
    }

    @Test func validPolicyLoads() throws {
        let loaded = try policy(
            Self.document(rules: #"[ { "id": "r1", "capabilities": ["workspace.view", "workspace.manage"] } ]"#)
        )
        #expect(loaded.ids == ["team"])
        #expect(loaded.capabilities == ["workspace.manage", "workspace.view"])
        #expect(loaded.warnings == [])
        #expect(loaded.kind(of: "workspace.view") == .presentation)
    }

    struct ErrorCase: CustomTestStringConvertible, Sendable {
        var name: String
        var json: String
        var expected: String
        var kind: Diagnostic.Kind
        var testDescription: String { name }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(
            name: "bad JSON (truncated)",
            json: "{\n  \"format\": \"group-policy/v1\",\n  \"id\": \"te",
            expected: "test.json:3:9: error: id: invalid JSON: unterminated string",
            kind: .invalidJSON
        ),
        ErrorCase(
            name: "bad JSON (trailing comma)",
            json: "{\n  \"format\": \"group-policy/v1\",\n}",
            expected: "test.json:3:1: error: $: invalid JSON: expected a string key, found '}'",
            kind: .invalidJSON
        ),
        ErrorCase(
            name: "duplicate key",
            json: "{\n  \"id\": \"a\",\n  \"id\": \"b\"\n}",
            expected: "test.json:3:3: error: $: invalid JSON: duplicate key 'id'",
            kind: .invalidJSON
        ),
        ErrorCase(
            name: "unknown key at the root, with a suggestion",
            json: document(extra: #""workspace": []"#),
            expected:
                "test.json:6:3: error: workspace: unknown key 'workspace' (did you mean 'workspaces'?); allowed: format, id, description, capabilities, rules, workspaces, sandbox, invariants",
            kind: .unknownKey
        ),
        ErrorCase(
            name: "unknown key in a rule",
            json: document(rules: #"[ { "id": "r1", "efect": "deny", "capabilities": ["workspace.view"] } ]"#),
            expected:
                "test.json:5:28: error: rules[0].efect: unknown key 'efect' (did you mean 'effect'?); allowed: id, description, effect, capabilities, match, requires",
            kind: .unknownKey
        ),
        ErrorCase(
            name: "unknown key in a match",
            json: document(
                rules: #"[ { "id": "r1", "match": { "product": "p" }, "capabilities": ["workspace.view"] } ]"#
            ),
            expected:
                "test.json:5:39: error: rules[0].match.product: unknown key 'product' (did you mean 'productId'?); allowed: groupType, groupId, productId, role",
            kind: .unknownKey
        ),
        ErrorCase(
            name: "wrong type",
            json: document(rules: #"[ { "id": "r1", "capabilities": "workspace.view" } ]"#),
            expected: "test.json:5:44: error: rules[0].capabilities: expected an array of strings, found a string",
            kind: .wrongType
        ),
        ErrorCase(
            name: "wrong type of a match value",
            json: document(rules: #"[ { "id": "r1", "match": { "role": 1 }, "capabilities": ["workspace.view"] } ]"#),
            expected:
                "test.json:5:47: error: rules[0].match.role: expected a string or an array of strings, found a number",
            kind: .wrongType
        ),
        ErrorCase(
            name: "missing required key",
            json: document(rules: #"[ { "capabilities": ["workspace.view"] } ]"#),
            expected: "test.json:5:14: error: rules[0].id: missing required key 'id'",
            kind: .missingKey
        ),
        ErrorCase(
            name: "missing format",
            json: "{ \"id\": \"x\", \"capabilities\": { \"a\": \"a\" }, \"rules\": [] }",
            expected: "test.json:1:1: error: format: missing required key 'format'",
            kind: .missingKey
        ),
        ErrorCase(
            name: "wrong format",
            json: document().replacingFirst("group-policy/v1", with: "group-policy/v2"),
            expected:
                "test.json:2:13: error: format: unsupported format 'group-policy/v2' (expected 'group-policy/v1')",
            kind: .invalidValue
        ),
        ErrorCase(
            name: "invalid policy id",
            json: document().replacingFirst("\"team\"", with: "\"team workspace\""),
            expected:
                "test.json:3:9: error: id: invalid policy id 'team workspace' (1-128 characters of A-Z a-z 0-9 . _ -)",
            kind: .invalidValue
        ),
        ErrorCase(
            name: "duplicate rule id",
            json: document(
                rules:
                    #"[ { "id": "r1", "capabilities": ["workspace.view"] }, { "id": "r1", "capabilities": ["workspace.view"] } ]"#
            ),
            expected: "test.json:5:74: error: rules[1].id: duplicate rule id 'r1' (also rules[0])",
            kind: .duplicateID
        ),
        ErrorCase(
            name: "duplicate workspace id",
            json: document(extra: #""workspaces": [ { "id": "team" }, { "id": "team" } ]"#),
            expected: "test.json:6:45: error: workspaces[1].id: duplicate workspace id 'team' (also workspaces[0])",
            kind: .duplicateID
        ),
        ErrorCase(
            name: "undeclared capability, with a suggestion",
            json: document(rules: #"[ { "id": "r1", "capabilities": ["workspace.mange"] } ]"#),
            expected:
                "test.json:5:45: error: rules[0].capabilities[0]: undeclared capability 'workspace.mange' (did you mean 'workspace.manage'?)",
            kind: .undeclaredCapability
        ),
        ErrorCase(
            name: "undeclared capability, nothing close",
            json: document(rules: #"[ { "id": "r1", "capabilities": ["billing"] } ]"#),
            expected: "test.json:5:45: error: rules[0].capabilities[0]: undeclared capability 'billing'",
            kind: .undeclaredCapability
        ),
        ErrorCase(
            name: "empty capabilities array in a rule",
            json: document(rules: #"[ { "id": "r1", "capabilities": [] } ]"#),
            expected: "test.json:5:44: error: rules[0].capabilities: must hold at least one value",
            kind: .emptyArray
        ),
        ErrorCase(
            name: "empty array in a match",
            json: document(
                rules: #"[ { "id": "r1", "match": { "productId": [] }, "capabilities": ["workspace.view"] } ]"#
            ),
            expected: "test.json:5:52: error: rules[0].match.productId: must hold at least one value",
            kind: .emptyArray
        ),
        ErrorCase(
            name: "role inside a workspace match",
            json: document(extra: #""workspaces": [ { "id": "team", "match": { "role": "ADMIN" } } ]"#),
            expected:
                "test.json:6:54: error: workspaces[0].match.role: a workspace match cannot use 'role' (use adminRoles to say who administers it)",
            kind: .roleInWorkspaceMatch
        ),
        ErrorCase(
            name: "a content capability granted without requires.entitlements",
            json: document(
                rules: #"[ { "id": "r1", "capabilities": ["workspace.view", "templates"] } ]"#,
                capabilities: #"{ "workspace.view": "View", "templates": { "kind": "content" } }"#
            ),
            expected:
                "test.json:5:63: error: rules[0].capabilities[1]: content capability 'templates' granted without requires.entitlements (membership is not entitlement)",
            kind: .contentWithoutEntitlements
        ),
        ErrorCase(
            name: "an invariant that names an undeclared capability",
            json: document(extra: #""invariants": [ { "id": "i", "never": { "capabilities": ["workspace.veiw"] } } ]"#),
            expected:
                "test.json:6:60: error: invariants[0].never.capabilities[0]: undeclared capability 'workspace.veiw' (did you mean 'workspace.view'?)",
            kind: .undeclaredCapability
        ),
        ErrorCase(
            name: "an invariant with both never and always",
            json: document(
                extra:
                    #""invariants": [ { "id": "i", "never": { "capabilities": ["workspace.view"] }, "always": { "capabilities": ["workspace.view"] } } ]"#
            ),
            expected:
                "test.json:6:91: error: invariants[0].always: an invariant has exactly one of 'never' and 'always', not both",
            kind: .invalidValue
        ),
        ErrorCase(
            name: "an invalid capability name",
            json: document(capabilities: #"{ "workspace.view": "View", "1st": "x" }"#),
            expected:
                "test.json:4:47: error: capabilities[\"1st\"]: invalid capability name '1st' (a letter, then up to 127 of A-Z a-z 0-9 . _ -)",
            kind: .invalidValue
        ),
        ErrorCase(
            name: "no capabilities declared",
            json: document(rules: "[]", capabilities: "{}"),
            expected: "test.json:4:19: error: capabilities: declare at least one capability",
            kind: .invalidValue
        ),
        ErrorCase(
            name: "unknown capability kind",
            json: document(capabilities: #"{ "workspace.view": { "kind": "secret" } }"#),
            expected:
                "test.json:4:49: error: capabilities[\"workspace.view\"].kind: unknown capability kind 'secret' (expected 'presentation' or 'content')",
            kind: .invalidValue
        ),
        ErrorCase(
            name: "unknown effect",
            json: document(rules: #"[ { "id": "r1", "effect": "allow", "capabilities": ["workspace.view"] } ]"#),
            expected: "test.json:5:38: error: rules[0].effect: unknown effect 'allow' (expected 'grant' or 'deny')",
            kind: .invalidValue
        ),
        ErrorCase(
            name: "unknown environment",
            json: document(
                rules:
                    #"[ { "id": "r1", "requires": { "environment": "Staging" }, "capabilities": ["workspace.view"] } ]"#
            ),
            expected:
                "test.json:5:57: error: rules[0].requires.environment: unknown environment 'Staging' (expected 'Production' or 'Sandbox')",
            kind: .invalidValue
        ),
        ErrorCase(
            name: "empty entitlements",
            json: document(
                rules: #"[ { "id": "r1", "requires": { "entitlements": [] }, "capabilities": ["workspace.view"] } ]"#
            ),
            expected: "test.json:5:58: error: rules[0].requires.entitlements: must hold at least one value",
            kind: .emptyArray
        ),
        ErrorCase(
            name: "a sandbox alias that is not a string",
            json: document(extra: #""sandbox": { "productAliases": { "example.productId.one": 1 } }"#),
            expected:
                "test.json:6:61: error: sandbox.productAliases[\"example.productId.one\"]: expected a string, found a number",
            kind: .wrongType
        ),
        ErrorCase(
            name: "a duplicate invariant id",
            json: document(
                extra:
                    #""invariants": [ { "id": "i", "never": { "capabilities": ["workspace.view"] } }, { "id": "i", "always": { "capabilities": ["workspace.view"] } } ]"#
            ),
            expected: "test.json:6:91: error: invariants[1].id: duplicate invariant id 'i' (also invariants[0])",
            kind: .duplicateID
        ),
        ErrorCase(
            name: "an invariant with neither never nor always",
            json: document(extra: #""invariants": [ { "id": "i" } ]"#),
            expected:
                "test.json:6:19: error: invariants[0].never: missing required key: an invariant needs one of 'never' or 'always'",
            kind: .missingKey
        ),
        ErrorCase(
            name: "a root that is not an object",
            json: "[]",
            expected: "test.json:1:1: error: $: expected an object, found an array",
            kind: .wrongType
        ),
    ]

    @Test(arguments: errorCases)
    func loadErrorsSayWhereAndWhat(_ errorCase: ErrorCase) throws {
        let error = try #require(singleError(errorCase.json))
        #expect(error.description == errorCase.expected)
        #expect(error.kind == errorCase.kind)
    }

    @Test func unsafeBytesAreErrorsWithALocationNotACrash() throws {
        // 0xFF never occurs in UTF-8; it sits where the "a" of "team" was (line 3, column 12).
        let text = Self.document()
        let team = try #require(text.utf8.indices.first { text.utf8[$0...].starts(with: "\"team\"".utf8) })
        var invalid = bytes(text)
        invalid[text.utf8.distance(from: text.utf8.startIndex, to: team) + 3] = 0xFF
        #expect {
            try Policy(jsonBytes: invalid, fileName: "test.json")
        } throws: { error in
            (error as? GroupPolicyError)?.description
                == "test.json:3:12: error: id: invalid JSON: invalid UTF-8 byte 0xFF"
        }
        // The 32nd '[' (column 42) is one level too deep.
        let deep = "{\"format\":" + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}"
        #expect {
            try Policy(jsonBytes: bytes(deep), fileName: "test.json")
        } throws: { error in
            (error as? GroupPolicyError)?.description
                == "test.json:1:42: error: format" + String(repeating: "[0]", count: 31)
                + ": invalid JSON: nesting deeper than 32 levels"
        }
        let huge = Self.document().replacingFirst("\"team\"", with: String(repeating: "9", count: 400) + "e99999")
        #expect {
            try Policy(jsonBytes: bytes(huge), fileName: "test.json")
        } throws: { error in
            (error as? GroupPolicyError)?.description == "test.json:3:9: error: id: expected a string, found a number"
        }
    }

    @Test func everyErrorIsReportedNotJustTheFirst() throws {
        let json = Self.document(
            rules: #"[ { "id": "r1", "capabilities": ["a", "b"] }, { "id": "r1", "capabilities": [] } ]"#
        )
        let errors = diagnostics(json).filter { $0.severity == .error }
        #expect(errors.map(\.kind) == [.undeclaredCapability, .undeclaredCapability, .duplicateID, .emptyArray])
    }

    @Test func aPolicyWithErrorsDoesNotLoadAtAll() {
        #expect {
            try policy(
                Self.document(
                    rules:
                        #"[ { "id": "ok", "capabilities": ["workspace.view"] }, { "id": "bad", "capabilities": ["x"] } ]"#
                )
            )
        } throws: { error in
            let error = error as? GroupPolicyError
            return error?.code == .invalidPolicy && error?.location?.line == 5
                && error?.jsonPath == "rules[1].capabilities[0]"
        }
    }

    // MARK: Warnings

    struct WarningCase: CustomTestStringConvertible, Sendable {
        var name: String
        var json: String
        var expected: [String]
        var testDescription: String { name }
    }

    static let warningCases: [WarningCase] = [
        WarningCase(
            name: "a role-level rule restricted to CONSUMER",
            json: document(
                rules:
                    #"[ { "id": "r1", "match": { "groupType": "CONSUMER", "role": "ADMIN" }, "capabilities": ["workspace.view", "workspace.manage"] } ]"#
            ),
            expected: [
                "test.json:5:14: warning: rules[0]: rule 'r1' matches role entries but only in CONSUMER groups, which have none: it can never match"
            ]
        ),
        WarningCase(
            name: "a groupType value this version does not know",
            json: document(
                rules:
                    #"[ { "id": "r1", "match": { "groupType": ["ORGANIZATION", "ENTERPRISE"] }, "capabilities": ["workspace.view", "workspace.manage"] } ]"#
            ),
            expected: [
                "test.json:5:69: warning: rules[0].match.groupType[1]: groupType 'ENTERPRISE' is not one this version knows (ORGANIZATION, CONSUMER); it matches only groups of exactly that type"
            ]
        ),
        WarningCase(
            name: "a role value this version does not know",
            json: document(
                rules:
                    #"[ { "id": "r1", "match": { "role": "MEMBER" }, "capabilities": ["workspace.view", "workspace.manage"] } ]"#
            ),
            expected: [
                "test.json:5:47: warning: rules[0].match.role: role 'MEMBER' is not one this version knows (ADMIN, NONE); it matches only entries with exactly that role"
            ]
        ),
        WarningCase(
            name: "a wildcard groupType",
            json: document(
                rules:
                    #"[ { "id": "r1", "match": { "groupType": "*" }, "capabilities": ["workspace.view", "workspace.manage"] } ]"#
            ),
            expected: [
                "test.json:5:52: warning: rules[0].match.groupType: '*' is not a wildcard for groupType (omit groupType to match every group)"
            ]
        ),
        WarningCase(
            name: "a role value this version does not know, in adminRoles",
            json: document(
                rules: #"[ { "id": "r1", "capabilities": ["workspace.view", "workspace.manage"] } ]"#,
                extra: #""workspaces": [ { "id": "team", "adminRoles": ["ADMIN", "OWNER"] } ]"#
            ),
            expected: [
                "test.json:6:59: warning: workspaces[0].adminRoles[1]: role 'OWNER' is not one this version knows (ADMIN, NONE); it matches only entries with exactly that role"
            ]
        ),
        WarningCase(
            name: "a role value this version does not know, in an invariant",
            json: document(
                rules: #"[ { "id": "r1", "capabilities": ["workspace.view", "workspace.manage"] } ]"#,
                extra:
                    #""invariants": [ { "id": "i", "never": { "capabilities": ["workspace.view"], "match": { "role": "MEMBER" } } } ]"#
            ),
            expected: [
                "test.json:6:98: warning: invariants[0].never.match.role: role 'MEMBER' is not one this version knows (ADMIN, NONE); it matches only entries with exactly that role"
            ]
        ),
        WarningCase(
            name: "no rules",
            json: document(rules: "[]"),
            expected: [
                "test.json:4:21: warning: capabilities[\"workspace.view\"]: capability 'workspace.view' is declared but no rule grants it",
                "test.json:4:47: warning: capabilities[\"workspace.manage\"]: capability 'workspace.manage' is declared but no rule grants it",
                "test.json:5:12: warning: rules: the policy has no rules, so it grants nothing",
            ]
        ),
        WarningCase(
            name: "a declared capability no rule grants",
            json: document(),
            expected: [
                "test.json:4:47: warning: capabilities[\"workspace.manage\"]: capability 'workspace.manage' is declared but no rule grants it"
            ]
        ),
        WarningCase(
            name: "a grant always removed by a broader deny",
            json: document(
                rules: """
                    [
                        { "id": "admins", "match": { "groupType": "ORGANIZATION", "productId": "p", "role": "ADMIN" }, "capabilities": ["workspace.manage"] },
                        { "id": "view", "capabilities": ["workspace.view"] },
                        { "id": "no-manage", "effect": "deny", "match": { "productId": ["p", "q"] }, "capabilities": ["workspace.manage"] }
                      ]
                    """
            ),
            expected: [
                "test.json:6:5: warning: rules[0]: grant rule 'admins' never grants anything: deny rule 'no-manage' removes all its capabilities wherever it matches"
            ]
        ),
        WarningCase(
            name: "a deny naming the grant's products in another order shadows it",
            json: document(
                rules: """
                    [
                        { "id": "g", "match": { "productId": ["p", "q"], "role": "ADMIN" }, "capabilities": ["workspace.manage", "workspace.view"] },
                        { "id": "d", "effect": "deny", "match": { "productId": ["r", "q", "p"] }, "capabilities": ["workspace.manage", "workspace.view"] }
                      ]
                    """
            ),
            expected: [
                "test.json:6:5: warning: rules[0]: grant rule 'g' never grants anything: deny rule 'd' removes all its capabilities wherever it matches"
            ]
        ),
        WarningCase(
            name: "a deny naming only some of the grant's products does not shadow it",
            json: document(
                rules: """
                    [
                        { "id": "g", "match": { "productId": ["p", "q"] }, "capabilities": ["workspace.manage", "workspace.view"] },
                        { "id": "d", "effect": "deny", "match": { "productId": "p" }, "capabilities": ["workspace.manage", "workspace.view"] }
                      ]
                    """
            ),
            expected: []
        ),
        WarningCase(
            name: "a narrower deny does not shadow",
            json: document(
                rules: """
                    [
                        { "id": "admins", "match": { "productId": "p" }, "capabilities": ["workspace.manage", "workspace.view"] },
                        { "id": "no-manage", "effect": "deny", "match": { "productId": "p", "role": "ADMIN" }, "capabilities": ["workspace.manage"] },
                        { "id": "sandbox-off", "effect": "deny", "requires": { "environment": "Sandbox" }, "capabilities": ["workspace.view"] }
                      ]
                    """
            ),
            expected: []
        ),
    ]

    @Test(arguments: warningCases)
    func warningsLoadAndSayWhere(_ warningCase: WarningCase) throws {
        let loaded = try policy(warningCase.json)
        #expect(loaded.warnings.map(\.description) == warningCase.expected)
        #expect(loaded.warnings.allSatisfy { $0.severity == .warning })
    }

    /// Every kind of diagnostic has a test that asserts its exact line, column and JSON path: the
    /// table cases above, and the tests named here for the others.
    @Test func everyKindOfDiagnosticHasAPositionedTest() throws {
        let all: Set<Diagnostic.Kind> = [
            .invalidJSON, .unknownKey, .wrongType, .missingKey, .invalidValue, .duplicateID, .undeclaredCapability,
            .emptyArray, .roleInWorkspaceMatch, .contentWithoutEntitlements, .unreadableFile, .conflictInSet,
            .limitExceeded, .unreachableConsumerRule, .unknownEnumValue, .noRules, .capabilityNeverGranted,
            .grantAlwaysDenied, .invariantViolated,
        ]
        var covered = Set(Self.errorCases.map(\.kind))
        for warningCase in Self.warningCases {
            covered.formUnion(try policy(warningCase.json).warnings.map(\.kind))
        }
        // conflictsBetweenTheFilesOfASetPointAtTheLaterValue, fileLimitsAreEnforced,
        // PolicyTestSuiteTests.aMissingPolicyIsReported (the test file's `policy` value),
        // InvariantTests (the invariant's object).
        covered.formUnion([.conflictInSet, .limitExceeded, .unreadableFile, .invariantViolated])
        #expect(all.subtracting(covered) == [])
    }

    // MARK: Policy sets

    @Test func setsLoadFromADirectoryAndQualifyRuleIDs() throws {
        let set = try Policy(contentsOfDirectory: repositoryFile("Policies"))
        #expect(set.ids == ["family-sharing", "team-workspace"])
        let decision = set.evaluate(try response(#"{"groups":[{"groupId":"1","groupType":"CONSUMER"}]}"#))
        #expect(decision.grants.map(\.rule).contains("family-sharing/family-members-share"))
        let single = try Policy(contentsOfFile: repositoryFile("Policies/family-sharing.json"))
        #expect(
            single.evaluate(try response(#"{"groups":[{"groupId":"1","groupType":"CONSUMER"}]}"#)).grants.first?.rule
                == "family-members-share"
        )
    }

    @Test func conflictsBetweenTheFilesOfASetPointAtTheLaterValue() throws {
        let directory = try makeTemporaryDirectory("set-conflicts")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = """
            { "format": "group-policy/v1", "id": "p", "capabilities": { "x": "X" },
              "rules": [ { "id": "r", "capabilities": ["x"] } ], "workspaces": [ { "id": "w" } ] }
            """
        let second = """
            {
              "format": "group-policy/v1",
              "id": "p",
              "capabilities": { "x": { "kind": "content" } },
              "rules": [ { "id": "r", "capabilities": ["x"], "requires": { "entitlements": ["e"] } } ],
              "workspaces": [ { "id": "w" } ]
            }
            """
        #expect(FileManager.default.createFile(atPath: directory + "/a.json", contents: Data(first.utf8)))
        #expect(FileManager.default.createFile(atPath: directory + "/b.json", contents: Data(second.utf8)))
        #expect {
            try Policy(contentsOfDirectory: directory)
        } throws: { error in
            let diagnostics = (error as? GroupPolicyError)?.diagnostics ?? []
            #expect(
                diagnostics.map(\.description) == [
                    "\(directory)/b.json:3:9: error: id: policy id 'p' is also the id of \(directory)/a.json",
                    "\(directory)/b.json:4:21: error: capabilities.x: capability 'x' is 'content' here but 'presentation' in \(directory)/a.json",
                    "\(directory)/b.json:6:27: error: workspaces[0].id: workspace id 'w' is also defined in \(directory)/a.json",
                ]
            )
            return diagnostics.allSatisfy { $0.kind == .conflictInSet }
        }
    }

    @Test func unreadableFilesAreTheirOwnError() {
        #expect {
            try Policy(contentsOfFile: "/nonexistent/policy.json")
        } throws: { error in
            let error = error as? GroupPolicyError
            return error?.code == .unreadableFile
                && error?.message == "cannot read /nonexistent/policy.json: no such file"
        }
    }

    @Test func fileLimitsAreEnforced() {
        #expect {
            try Policy(jsonBytes: bytes(Self.document()), fileName: "big.json", limits: PolicyLimits(maximumBytes: 10))
        } throws: { error in
            (error as? GroupPolicyError)?.description
                == "big.json:1:1: error: $: file of 194 bytes is over the limit of 10 bytes"
        }
        #expect {
            try Policy(jsonBytes: bytes(Self.document()), limits: PolicyLimits(maximumRules: 0))
        } throws: { error in
            (error as? GroupPolicyError)?.diagnostics.first?.description
                == "<input>:5:12: error: rules: 1 rules is over the limit of 0"
        }
        // The capabilities section: at the limit loads; one over is refused at the section (and
        // declares nothing, so the rule's capability is undeclared too).
        #expect(throws: Never.self) {
            try Policy(jsonBytes: bytes(Self.document()), limits: PolicyLimits(maximumCapabilities: 2))
        }
        #expect {
            try Policy(jsonBytes: bytes(Self.document()), limits: PolicyLimits(maximumCapabilities: 1))
        } throws: { error in
            (error as? GroupPolicyError)?.diagnostics.map(\.description)
                == [
                    "<input>:4:19: error: capabilities: 2 capabilities is over the limit of 1",
                    "<input>:5:45: error: rules[0].capabilities[0]: undeclared capability 'workspace.view'",
                ]
        }
        let deep = "{\"format\":" + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}"
        #expect {
            try Policy(jsonBytes: bytes(deep))
        } throws: { error in
            (error as? GroupPolicyError)?.diagnostics.first?.message == "invalid JSON: nesting deeper than 32 levels"
        }
    }
}
