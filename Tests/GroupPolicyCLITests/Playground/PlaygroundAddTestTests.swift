import Foundation
import ServingTestSupport
import Testing

/// "Add test": what the author sees (a matrix cell, a capability of the Decision, a why-not)
/// becomes the test case that pins it, added to the test file of the policy declaring the
/// capability as an unsaved edit that the tests run; a failing case says why.
@Suite struct PlaygroundAddTestTests {
    /// The Plus administrator's matrix row as the page sends it.
    static var plusAdminCell: [String: Any] {
        [
            "capability": "workspace.export",
            "group": "unnamed-group",
            "response": #"{"groups":[{"groupId":"unnamed-group","groupType":"ORGANIZATION","#
                + #""roles":[{"productId":"com.example.teams.plus","role":"ADMIN"}]}]}"#,
            "responseName": "a matrix cell",
            "environment": "Production",
            "entitlements": [String](),
        ]
    }

    static let plusAdminCase = """
            {
              "name": "'workspace.export' is granted in Production, ORGANIZATION group 'unnamed-group', roles [com.example.teams.plus: ADMIN], entitlements []",
              "context": {"environment":"Production","entitlements":[]},
              "response": {"groups":[{"groupId":"unnamed-group","groupType":"ORGANIZATION","roles":[{"productId":"com.example.teams.plus","role":"ADMIN"}]}]},
              "expect": {"includes":["workspace.export"]}
            }
        """

    /// The totals of a tests answer, and the named case's failures and explanations.
    static func run(
        _ playground: PlaygroundProcess,
        files: [String: String],
        case name: String
    ) async throws -> (passed: Int, failed: Int, failures: [String]?, explanations: [String]?) {
        let tests = try #require(
            try await playground.post("/api/tests", ["files": files]).json()["tests"] as? [String: Any]
        )
        let cases = try #require(tests["files"] as? [[String: Any]]).flatMap { ($0["cases"] as? [[String: Any]]) ?? [] }
        let found = cases.first { $0["name"] as? String == name }
        return (
            try #require(tests["passed"] as? Int), try #require(tests["failed"] as? Int),
            found?["failures"] as? [String], found?["explanations"] as? [String]
        )
    }

    @Test func aMatrixCellBecomesAPassingTestThatFailsWithItsExplanationOnceTheRuleIsNarrowed() async throws {
        let playground = try await PlaygroundProcess.start()
        let widened = try PlaygroundAnswerTests.plusAdminsExport.text(in: playground)
        var body = Self.plusAdminCell
        body["files"] = ["team-workspace.json": widened]
        let answer = try await playground.post("/api/add-test", body).json()
        let name =
            "'workspace.export' is granted in Production, ORGANIZATION group 'unnamed-group', roles "
            + "[com.example.teams.plus: ADMIN], entitlements []"
        #expect(answer["file"] as? String == "team-workspace.tests.json")
        #expect(answer["name"] as? String == name)
        #expect(answer["granted"] as? Bool == true)
        let saved = try playground.policyText("team-workspace.tests.json")
        let text = try #require(answer["text"] as? String)
        // Added after the last case, indented as it is; the rest of the file as it was.
        let end = try #require(saved.range(of: "    }\n  ]\n}\n", options: .backwards))
        #expect(text == saved[..<end.lowerBound] + "    },\n" + Self.plusAdminCase + "\n  ]\n}\n")
        #expect(try playground.policyText("team-workspace.tests.json") == saved)

        let before = try await Self.run(playground, files: ["team-workspace.json": widened], case: name)
        let after = try await Self.run(
            playground,
            files: ["team-workspace.json": widened, "team-workspace.tests.json": text],
            case: name
        )
        #expect(after.passed == before.passed + 1 && after.failed == before.failed)
        #expect(after.failures == [] && after.explanations == [])

        // The rule as on disk again: the pinned case fails, and says why.
        let narrowed = try await Self.run(playground, files: ["team-workspace.tests.json": text], case: name)
        #expect(
            narrowed.failures == [
                "includes: expected 'workspace.export' to be granted, got "
                    + #"["workspace.manage-settings", "workspace.members", "workspace.view"]"#
            ]
        )
        #expect(
            narrowed.explanations == [
                "capability workspace.export: granted in 0 of 1 group\n\ngroup unnamed-group (ORGANIZATION): not "
                    + "granted: rule 'pro-admins-manage' needs role ADMIN for com.example.teams.pro; this group has "
                    + "no role for com.example.teams.pro"
            ]
        )
    }

    /// A capability of the Decision pins its group's entry alone; a why-not pins the whole response;
    /// a second case of one name is numbered; a family capability goes to the family's tests.
    @Test func aDecisionsCapabilityAndAWhyNotArePinnedWhereTheyBelong() async throws {
        let playground = try await PlaygroundProcess.start()
        var inGroup = try playground.customer("several-groups.json")
        inGroup["capability"] = "workspace.export"
        inGroup["group"] = "844424930131968"
        let first = try await playground.post("/api/add-test", inGroup).json()
        #expect(
            first["case"] as? String == """
                {
                  "name": "'workspace.export' is granted in Production, ORGANIZATION group '844424930131968', roles [com.example.teams.pro: ADMIN, com.example.other: NONE], entitlements []",
                  "context": {"environment":"Production","entitlements":[]},
                  "response": {"groups":[{"groupId":"844424930131968","groupType":"ORGANIZATION","roles":[{"productId":"com.example.teams.pro","role":"ADMIN"},{"productId":"com.example.other","role":"NONE"}]}]},
                  "expect": {"includes":["workspace.export"]}
                }
                """
        )
        inGroup["files"] = ["team-workspace.tests.json": try #require(first["text"] as? String)]
        let second = try await playground.post("/api/add-test", inGroup).json()
        #expect(second["name"] as? String == (first["name"] as? String).map { $0 + " (2)" })

        var whyNot = try playground.customer("several-groups.json", environment: "sandbox")
        whyNot["capability"] = "family.premium-recipes"
        whyNot["responseName"] = "Examples/several-groups.json"
        let family = try await playground.post("/api/add-test", whyNot).json()
        #expect(family["file"] as? String == "family-sharing.tests.json")
        #expect(family["granted"] as? Bool == false)
        let pinned = try #require(family["case"] as? String)
        #expect(
            pinned.hasPrefix(
                """
                {
                  "name": "'family.premium-recipes' is not granted in Sandbox, Examples/several-groups.json, entitlements []",
                  "context": {"environment":"Sandbox","entitlements":[]},
                """
            )
        )
        #expect(pinned.hasSuffix(#""expect": {"excludes":["family.premium-recipes"]}"# + "\n}"))
        let object = try JSONSerialization.jsonObject(with: Data(pinned.utf8)) as? [String: Any]
        let groups = (object?["response"] as? [String: Any])?["groups"] as? [[String: Any]]
        #expect(groups?.count == 3)
        let text = try #require(family["text"] as? String)
        let run = try await Self.run(
            playground,
            files: ["family-sharing.tests.json": text],
            case: try #require(family["name"] as? String)
        )
        #expect(run.failures == [])
    }

    @Test func whatCannotBePinnedIsOneLine() async throws {
        let playground = try await PlaygroundProcess.start()
        var body = try playground.customer("organization-admin.json")
        body["capability"] = "workspace.exprot"
        #expect(
            try await playground.post("/api/add-test", body).json()["error"] as? String
                == "undeclared capability 'workspace.exprot'"
        )
        body["capability"] = "workspace.export"
        body["files"] = ["team-workspace.tests.json": "{ \"format\": "]
        let answer = try await playground.post("/api/add-test", body).json()
        #expect(
            answer["error"] as? String
                == "no test file in Policies that loads tests a policy declaring 'workspace.export' (add a "
                + "*.tests.json beside the policy to pin tests from the playground)"
        )
        body.removeValue(forKey: "capability")
        let refused = try await playground.post("/api/add-test", body)
        #expect(refused.status == 400)
        #expect(try refused.json()["error"] as? String == "the request names no 'capability' to pin in a test")
    }

    /// The test file is a file of the page like the policies: listed, edited, saved when the
    /// directory with it checks clean.
    @Test func aTestFileIsListedAndSavedLikeAPolicy() async throws {
        let playground = try await PlaygroundProcess.start()
        let files = try #require(try await playground.get("/api/files").json()["files"] as? [[String: String]])
        #expect(
            files.map { "\($0["name"] ?? "") \($0["kind"] ?? "")" } == [
                "family-sharing.json policy", "team-workspace.json policy", "family-sharing.tests.json tests",
                "team-workspace.tests.json tests",
            ]
        )
        var body = Self.plusAdminCell
        body["files"] = ["team-workspace.json": try PlaygroundAnswerTests.plusAdminsExport.text(in: playground)]
        let text = try #require(try await playground.post("/api/add-test", body).json()["text"] as? String)
        let versions = try await playground.versions()
        let broken = text.replacingOccurrences(of: #""expect": {"includes""#, with: #""expect": {"inclues""#)
        let refused = try await playground.post(
            "/api/save",
            ["file": "team-workspace.tests.json", "files": ["team-workspace.tests.json": broken], "versions": versions]
        )
        #expect(refused.status == 422)
        #expect(
            try refused.json()["error"] as? String == "not saved: with this edit the directory checks with 1 error"
        )
        let saved = try await playground.post(
            "/api/save",
            ["file": "team-workspace.tests.json", "files": ["team-workspace.tests.json": text], "versions": versions]
        )
        #expect(saved.status == 200)
        #expect(try playground.policyText("team-workspace.tests.json") == text)
    }
}
