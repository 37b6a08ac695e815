import Foundation
import ServingTestSupport
import Testing

/// Every answer of `group-policy playground` over HTTP on 127.0.0.1, on a scratch copy of the
/// bundled policies: the same values the CLI's commands print.
@Suite struct PlaygroundAnswerTests {
    /// An edit that drops `workspace.members` from the rule every seat holder meets.
    static let membersDropped = Edit(
        file: "team-workspace.json",
        old: #""capabilities": ["workspace.view", "workspace.members"]"#,
        new: #""capabilities": ["workspace.view"]"#
    )

    /// An edit that also gives Plus administrators exports: it checks clean.
    static let plusAdminsExport = Edit(
        file: "team-workspace.json",
        old: #""capabilities": ["workspace.manage-settings"]"#,
        new: #""capabilities": ["workspace.manage-settings", "workspace.export"]"#
    )

    /// An edit of a rule's description only: it checks clean and changes no decision.
    static let descriptionReworded = Edit(
        file: "team-workspace.json",
        old: #""description": "The Pro template library""#,
        new: #""description": "The template library of the Pro plan""#
    )

    /// An edit that drops the comma after the first rule's id: invalid JSON on line 16.
    static let commaDropped = Edit(
        file: "team-workspace.json",
        old: #""id": "seat-holders-view","#,
        new: #""id": "seat-holders-view""#
    )

    @Test func theFirstLineNamesTheURLOnAFreePort() async throws {
        let playground = try await PlaygroundProcess.start()
        #expect(playground.firstLine == "Playground at http://127.0.0.1:\(playground.port)/\n")
        #expect(playground.port > 0)
    }

    @Test(arguments: [
        ("/", "text/html; charset=utf-8"),
        ("/js/main.js", "text/javascript; charset=utf-8"),
        ("/playground.css", "text/css; charset=utf-8"),
        ("/favicon.svg", "image/svg+xml"),
    ])
    func thePageAndItsFilesAreServedFromTheBinary(path: String, contentType: String) async throws {
        let playground = try await PlaygroundProcess.start()
        let answer = try await playground.get(path)
        #expect(answer.status == 200)
        #expect(answer.headers["content-type"] == contentType)
        #expect(answer.headers["content-length"] == String(answer.body.count))
    }

    @Test func thePageCarriesEveryTestHookAndLoadsNothingFromElsewhere() async throws {
        let playground = try await PlaygroundProcess.start()
        let page = try await playground.get("/").text
        for hook in [
            "policy-editor", "response-editor", "diagnostics", "decision", "explanation", "tests", "scenario-matrix",
            "save", "verdict", "pin-baseline", "add-test", "share", "share-link", "share-status",
        ] {
            #expect(page.contains("data-testid=\"\(hook)\""), "missing data-testid \(hook)")
        }
        var texts = [page, try await playground.get("/playground.css").text]
        for path in PlaygroundProcess.scriptPaths {
            let answer = try await playground.get(path)
            #expect(answer.status == 200, "\(path)")
            texts.append(answer.text)
        }
        for text in texts {
            #expect(!text.contains("http://"))
            #expect(!text.contains("https://"))
        }
        #expect(!page.contains("<script>"))
        #expect(!page.contains("style=\""))
    }

    @Test func filesListsThePolicySetItsTestFilesAndTheResponsesTheTestsName() async throws {
        let playground = try await PlaygroundProcess.start()
        let answer = try await playground.get("/api/files").json()
        let files = try #require(answer["files"] as? [[String: String]])
        #expect(
            files.map { $0["name"] } == [
                "family-sharing.json", "team-workspace.json", "family-sharing.tests.json", "team-workspace.tests.json",
            ]
        )
        #expect(files[1]["text"] == (try playground.policyText("team-workspace.json")))
        let responses = try #require(answer["responses"] as? [[String: String]])
        #expect(
            responses.map { $0["name"] } == [
                "Examples/consumer-member.json", "Examples/no-groups.json", "Examples/organization-admin.json",
                "Examples/sandbox-placeholder.json", "Examples/seat-holder.json", "Examples/several-groups.json",
                "sandbox placeholder",
            ]
        )
    }

    @Test func checkReportsTheBundledPoliciesClean() async throws {
        let playground = try await PlaygroundProcess.start()
        let check = try #require(try await playground.post("/api/check", [:]).json()["check"] as? [String: Any])
        let summary = try #require(check["summary"] as? [String: Int])
        #expect(
            summary == [
                "policies": 2, "testFiles": 2, "errors": 0, "warnings": 0, "invariants": 9, "invariantsHolding": 9,
            ]
        )
    }

    @Test func checkPutsBrokenJSONAtItsLineAndColumn() async throws {
        let playground = try await PlaygroundProcess.start()
        let body = ["files": try Self.commaDropped.files(in: playground)]
        let check = try #require(try await playground.post("/api/check", body).json()["check"] as? [String: Any])
        #expect(
            try Self.descriptions(check) == [
                #"Policies/team-workspace.json:16:7: error: rules[0]: invalid JSON: expected ',' or '}', found '"'"#,
                "Policies/team-workspace.tests.json:3:13: error: policy: policy 'Policies/team-workspace.json' does not "
                    + "load: 1 error(s), first: Policies/team-workspace.json:16:7: error: rules[0]: invalid JSON: "
                    + #"expected ',' or '}', found '"'"#,
            ]
        )
        let files = try #require(check["files"] as? [[String: Any]])
        let first = try #require((files[1]["diagnostics"] as? [[String: Any]])?.first)
        #expect(first["line"] as? Int == 16)
        #expect(first["column"] as? Int == 7)
    }

    @Test func checkProvesTheInvariantsOfTheEdit() async throws {
        let playground = try await PlaygroundProcess.start()
        let body = ["files": try Self.membersDropped.files(in: playground)]
        let check = try #require(try await playground.post("/api/check", body).json()["check"] as? [String: Any])
        #expect(
            try Self.descriptions(check) == [
                "Policies/team-workspace.json:7:5: warning: capabilities[\"workspace.members\"]: capability "
                    + "'workspace.members' is declared but no rule grants it",
                "Policies/team-workspace.json:73:5: error: invariants[1]: invariant 'pro-admins-always-view' does not "
                    + "hold: 'workspace.members' is missing in Production, ORGANIZATION group 'unnamed-group', roles "
                    + "[com.example.teams.pro: ADMIN], entitlements []",
            ]
        )
    }

    @Test func decisionIsEvalExplainOfTheResponse() async throws {
        let playground = try await PlaygroundProcess.start()
        let body = try playground.customer("organization-admin.json", entitlements: ["com.example.teams.pro"])
        let answer = try await playground.post("/api/decision", body).json()
        let decision = try #require(answer["decision"] as? [String: Any])
        #expect(
            decision["capabilities"] as? [String] == [
                "team.templates", "workspace.export", "workspace.manage-seats", "workspace.manage-settings",
                "workspace.members", "workspace.view",
            ]
        )
        let grants = try #require(decision["grants"] as? [[String: String]])
        #expect(
            Set(grants.map { "\($0["capability"] ?? "") \($0["rule"] ?? "")" }) == [
                "team.templates team-workspace/pro-templates", "workspace.export team-workspace/pro-admins-manage",
                "workspace.manage-seats team-workspace/pro-admins-manage",
                "workspace.manage-settings team-workspace/pro-admins-manage",
                "workspace.members team-workspace/seat-holders-view", "workspace.view team-workspace/seat-holders-view",
            ]
        )
        // The same JSON as `eval --explain` prints, compacted.
        let cli = try await CLIRunner.run([
            "eval", "--policy", playground.policies, "--response",
            playground.root + "/Examples/organization-admin.json",
            "--entitlement", "com.example.teams.pro", "--explain",
        ])
        #expect(
            try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? NSDictionary == decision as NSDictionary
        )
        let capabilities = try #require(answer["capabilities"] as? [[String: Any]])
        #expect(capabilities.count == 10)
    }

    @Test func explainAnswersWhyAndWhyNot() async throws {
        let playground = try await PlaygroundProcess.start()
        var body = try playground.customer("organization-admin.json")
        body["capability"] = "workspace.export"
        let why = try await playground.post("/api/explain", body).json()
        #expect(
            why["text"] as? String == """
                capability workspace.export: granted in 1 of 1 group

                group 281474976710656 (ORGANIZATION): granted by rule 'team-workspace/pro-admins-manage' through \
                com.example.teams.pro ADMIN
                """
        )
        body["capability"] = "family.space"
        let whyNot = try await playground.post("/api/explain", body).json()
        #expect(
            whyNot["text"] as? String == """
                capability family.space: granted in 0 of 1 group

                group 281474976710656 (ORGANIZATION): not granted: rule 'family-sharing/family-members-share' needs \
                group type CONSUMER; this group is ORGANIZATION
                """
        )
        body["capability"] = "family.spaces"
        let undeclared = try await playground.post("/api/explain", body).json()
        // The line `explain` prints after `Error: `.
        #expect(
            undeclared["error"] as? String == "undeclared capability 'family.spaces' (did you mean 'family.space'?)"
        )
    }

    @Test func testsRunTheTestFilesAgainstTheEditWithCoverage() async throws {
        let playground = try await PlaygroundProcess.start()
        let clean = try #require(try await playground.post("/api/tests", [:]).json()["tests"] as? [String: Any])
        #expect(clean["passed"] as? Int == 19)
        #expect(clean["failed"] as? Int == 0)
        let coverage = try #require(clean["coverage"] as? [[String: Any]])
        #expect(coverage.map { $0["unexercisedRules"] as? [String] } == [[], []])
        #expect(coverage.map { ($0["rules"] as? [String])?.count } == [3, 5])

        let body = ["files": try Self.membersDropped.files(in: playground)]
        let edited = try #require(try await playground.post("/api/tests", body).json()["tests"] as? [String: Any])
        #expect(edited["passed"] as? Int == 12)
        #expect(edited["failed"] as? Int == 7)
    }

    @Test func theMatrixMarksTheCellsAnEditChanges() async throws {
        let playground = try await PlaygroundProcess.start()
        let saved = try #require(try await playground.post("/api/matrix", [:]).json()["matrix"] as? [String: Any])
        let rows = try #require(saved["rows"] as? [[String: Any]])
        #expect(rows.count == 21)
        #expect((saved["capabilities"] as? [String])?.count == 10)
        #expect(rows.allSatisfy { ($0["changed"] as? [String]) == [] })

        let body = ["files": try Self.membersDropped.files(in: playground)]
        let answer = try await playground.post("/api/matrix", body).json()
        let matrix = try #require(answer["matrix"] as? [String: Any])
        let changed = try #require(matrix["rows"] as? [[String: Any]]).filter { ($0["changed"] as? [String]) != [] }
        #expect(
            changed.map {
                "\($0["groupType"] ?? "") \($0["productId"] ?? "") \($0["role"] ?? "") \($0["changed"] ?? "")"
            }
                == [
                    "ORGANIZATION com.example.teams.plus ADMIN [\"workspace.members\"]",
                    "ORGANIZATION com.example.teams.plus NONE [\"workspace.members\"]",
                    "ORGANIZATION com.example.teams.plus UNNAMED_ROLE [\"workspace.members\"]",
                    "ORGANIZATION com.example.teams.pro ADMIN [\"workspace.members\"]",
                    "ORGANIZATION com.example.teams.pro NONE [\"workspace.members\"]",
                    "ORGANIZATION com.example.teams.pro UNNAMED_ROLE [\"workspace.members\"]",
                ]
        )
        #expect(matrix["changedCells"] as? Int == 6)
        #expect(matrix["complete"] as? Bool == true)
        #expect(answer["verdict"] as? String == "narrows")
        let table = try #require(answer["diffTable"] as? String)
        #expect(table.hasPrefix("verdict: narrows (1 capability: workspace.members narrows)\nCHANGE  CAPABILITY"))
        #expect(table.contains("2 changes (0 added, 2 removed)"))
    }

    /// Against a pinned baseline, the verdict is of the edit against that version, not the files
    /// on disk; a baseline that does not load gives no verdict and the line saying why.
    @Test func theVerdictIsAgainstThePinnedBaseline() async throws {
        let playground = try await PlaygroundProcess.start()
        let file = "team-workspace.json"
        let widened = try Self.plusAdminsExport.text(in: playground)
        let narrowed = try Self.membersDropped.text(in: playground)
        func verdict(edit: String?, baseline: String?) async throws -> (String?, String?, String?) {
            var body: [String: Any] = [:]
            if let edit { body["files"] = [file: edit] }
            if let baseline { body["baseline"] = [file: baseline] }
            let answer = try await playground.post("/api/matrix", body).json()
            let diff = answer["diff"] as? [String: Any]
            let verdicts = (diff?["capabilityVerdicts"] as? [String: String])?.map { "\($0.key) \($0.value)" }
            return (
                answer["verdict"] as? String, verdicts?.sorted().joined(separator: ", "), answer["baseline"] as? String
            )
        }
        #expect(try await verdict(edit: widened, baseline: nil) == ("widens", "workspace.export widens", "disk"))
        #expect(try await verdict(edit: widened, baseline: widened) == ("equivalent", "", "pinned"))
        #expect(
            try await verdict(edit: widened, baseline: narrowed)
                == ("widens", "workspace.export widens, workspace.members widens", "pinned")
        )
        #expect(
            try await verdict(edit: narrowed, baseline: widened)
                == ("narrows", "workspace.export narrows, workspace.members narrows", "pinned")
        )
        let broken = try Self.commaDropped.text(in: playground)
        let answer = try await playground.post("/api/matrix", ["files": [file: widened], "baseline": [file: broken]])
            .json()
        #expect(answer["verdict"] is NSNull)
        #expect(
            answer["diffRefusal"] as? String
                == "the pinned baseline does not load: Policies/team-workspace.json:16:7: error: "
                + "rules[0]: invalid JSON: expected ',' or '}', found '\"'"
        )
    }

    /// Every diagnostic line of a check answer, as `check` prints them.
    static func descriptions(_ check: [String: Any]) throws -> [String] {
        let files = try #require(check["files"] as? [[String: Any]])
        return files.flatMap {
            ($0["diagnostics"] as? [[String: Any]] ?? []).compactMap { $0["description"] as? String }
        }
    }
}
