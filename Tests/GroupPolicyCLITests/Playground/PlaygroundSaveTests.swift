import Foundation
import ServingTestSupport
import Testing

/// Saving from the playground: only a policy file of the directory, only when the directory with
/// the edit checks without errors, atomically.
@Suite struct PlaygroundSaveTests {
    @Test func aCleanEditIsWrittenAndNothingElse() async throws {
        let playground = try await PlaygroundProcess.start()
        let edit = PlaygroundAnswerTests.plusAdminsExport
        let text = try edit.text(in: playground)
        let before = try Self.listing(playground.root, sizes: false)
        let answer = try await playground.post("/api/save", ["file": edit.file, "files": [edit.file: text]])
        #expect(answer.status == 200)
        #expect(try answer.json() as NSDictionary == ["saved": "team-workspace.json", "bytes": text.utf8.count])
        #expect(try playground.policyText(edit.file) == text)
        // No temporary file left behind, no other file touched.
        #expect(try Self.listing(playground.root, sizes: false) == before)
        // What is on disk is now what the matrix compares with.
        let matrix = try #require(try await playground.post("/api/matrix", [:]).json()["matrix"] as? [String: Any])
        let rows = try #require(matrix["rows"] as? [[String: Any]])
        #expect(rows.allSatisfy { ($0["changed"] as? [String]) == [] })
    }

    @Test(arguments: [PlaygroundAnswerTests.membersDropped, PlaygroundAnswerTests.commaDropped])
    func anEditWithErrorsIsNotSaved(edit: Edit) async throws {
        let playground = try await PlaygroundProcess.start()
        let before = try playground.policyText(edit.file)
        let answer = try await playground.post(
            "/api/save",
            ["file": edit.file, "files": try edit.files(in: playground)]
        )
        #expect(answer.status == 422)
        let expected = edit.old == PlaygroundAnswerTests.commaDropped.old ? "2 errors" : "1 error"
        #expect(
            try answer.json()["error"] as? String == "not saved: with this edit the directory checks with \(expected)"
        )
        #expect(try playground.policyText(edit.file) == before)
    }

    @Test(arguments: [
        ("../outside.json", 400, "refused: '../outside.json' leads out of the policy directory"),
        ("/tmp/outside.json", 400, "refused: '/tmp/outside.json' is an absolute path; give a policy file's name"),
        (
            "schema/group-policy.schema.json", 400,
            "refused: 'schema/group-policy.schema.json' is not a file name in the policy directory"
        ),
        ("new.json", 400, "refused: 'new.json' is not a policy file of Policies"),
        ("team-workspace.tests.json", 400, "refused: 'team-workspace.tests.json' is not a policy file of Policies"),
    ])
    func aNameOutsideThePolicySetIsRefused(name: String, status: Int, message: String) async throws {
        let playground = try await PlaygroundProcess.start()
        let before = try Self.listing(playground.root)
        let text = try playground.policyText("team-workspace.json")
        let answer = try await playground.post("/api/save", ["file": name, "files": [name: text]])
        #expect(answer.status == status)
        #expect(try answer.json()["error"] as? String == message)
        #expect(try Self.listing(playground.root) == before)
    }

    @Test func aLinkLeadingOutOfTheDirectoryIsNotWrittenThrough() async throws {
        let playground = try await PlaygroundProcess.start()
        // A policy outside the directory, linked into it: part of the set, but not the directory's to write.
        let outside = playground.root + "/outside.json"
        let original = try playground.policyText("family-sharing.json")
            .replacingOccurrences(of: "\"id\": \"family-sharing\"", with: "\"id\": \"linked\"")
            .replacingOccurrences(of: "\"id\": \"family\"", with: "\"id\": \"linked-family\"")
        try original.write(toFile: outside, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            atPath: playground.policies + "/linked.json",
            withDestinationPath: outside
        )
        let answer = try await playground.post(
            "/api/save",
            ["file": "linked.json", "files": ["linked.json": original + " "]]
        )
        #expect(answer.status == 403)
        #expect(
            try answer.json()["error"] as? String
                == "refused: 'linked.json' is a link leading out of the policy directory"
        )
        #expect(try String(contentsOfFile: outside, encoding: .utf8) == original)
    }

    /// Every file under a folder, with its size unless told not to, sorted, hidden files too.
    static func listing(_ root: String, sizes: Bool = true) throws -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: root)
        var entries: [String] = []
        while let path = enumerator?.nextObject() as? String {
            let attributes = try FileManager.default.attributesOfItem(atPath: root + "/" + path)
            entries.append(sizes ? "\(path) \(attributes[.size] ?? 0)" : path)
        }
        return entries.sorted()
    }
}
