import Foundation
import ServingTestSupport
import Testing

/// Saving from the playground: only a policy file of the directory, only when the directory with
/// the edit checks without errors, only over the version the edit was made from, atomically.
@Suite struct PlaygroundSaveTests {
    @Test func aCleanEditIsWrittenAndNothingElse() async throws {
        let playground = try await PlaygroundProcess.start()
        let edit = PlaygroundAnswerTests.plusAdminsExport
        let text = try edit.text(in: playground)
        let versions = try await playground.versions()
        let before = try Self.listing(playground.root, sizes: false)
        let answer = try await playground.post(
            "/api/save",
            ["file": edit.file, "files": [edit.file: text], "versions": versions]
        )
        #expect(answer.status == 200)
        let written = try await playground.versions()[edit.file]
        #expect(
            try answer.json() as NSDictionary
                == ["saved": "team-workspace.json", "bytes": text.utf8.count, "version": written ?? ""]
        )
        #expect(written != versions[edit.file])
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
            ["file": edit.file, "files": try edit.files(in: playground), "versions": try await playground.versions()]
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
        ("new.json", 400, "refused: 'new.json' is not a policy or test file of Policies"),
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

    @Test func aSaveThatNamesNoVersionIsRefused() async throws {
        let playground = try await PlaygroundProcess.start()
        let edit = PlaygroundAnswerTests.plusAdminsExport
        let before = try playground.policyText(edit.file)
        let answer = try await playground.post(
            "/api/save",
            ["file": edit.file, "files": try edit.files(in: playground)]
        )
        #expect(answer.status == 400)
        #expect(
            try answer.error()
                == "the request names no version of 'team-workspace.json' in 'versions' (the version the edit was "
                + "made from)"
        )
        #expect(try playground.policyText(edit.file) == before)
    }

    /// Two tabs load the file; the first saves its edit; the second, whose page still holds the old
    /// version, saves another edit: 409 with both texts, and the first edit stays on disk.
    @Test func aSecondSaveFromAStalePageGets409AndTheFirstEditStaysOnDisk() async throws {
        let playground = try await PlaygroundProcess.start()
        let loaded = try await playground.versions()
        let first = try PlaygroundAnswerTests.plusAdminsExport.text(in: playground)
        let second = try PlaygroundAnswerTests.descriptionReworded.text(in: playground)
        let file = "team-workspace.json"
        let saved = try await playground.post("/api/save", ["file": file, "files": [file: first], "versions": loaded])
        #expect(saved.status == 200)
        let stale = try await playground.post("/api/save", ["file": file, "files": [file: second], "versions": loaded])
        #expect(stale.status == 409)
        #expect(
            try stale.json() as NSDictionary == [
                "error": "not saved: team-workspace.json changed on disk since the page loaded it (reload it, or "
                    + "overwrite it on purpose)",
                "file": file, "disk": first, "diskVersion": try await playground.versions()[file] ?? "", "edit": second,
            ]
        )
        #expect(try playground.policyText(file) == first)
    }

    /// An editor writes the file after the page loaded it: the page's save gets 409, and the
    /// editor's text stays on disk.
    @Test func anEditorsWriteBetweenLoadAndSaveGets409() async throws {
        let playground = try await PlaygroundProcess.start()
        let loaded = try await playground.versions()
        let file = "team-workspace.json"
        let editors = try PlaygroundAnswerTests.descriptionReworded.text(in: playground)
        try editors.write(toFile: playground.policies + "/" + file, atomically: false, encoding: .utf8)
        let edit = try playground.policyText(file).replacingOccurrences(
            of: PlaygroundAnswerTests.plusAdminsExport.old,
            with: PlaygroundAnswerTests.plusAdminsExport.new
        )
        let answer = try await playground.post("/api/save", ["file": file, "files": [file: edit], "versions": loaded])
        #expect(answer.status == 409)
        #expect(try answer.json()["disk"] as? String == editors)
        #expect(try playground.policyText(file) == editors)
    }

    /// After a conflict, saving with the version the conflict showed writes the edit.
    ///
    /// That is how the author overwrites on purpose; a file changed again since is still refused.
    @Test func overwritingOnPurposeWithTheVersionShownSucceeds() async throws {
        let playground = try await PlaygroundProcess.start()
        let loaded = try await playground.versions()
        let file = "team-workspace.json"
        let editors = try PlaygroundAnswerTests.descriptionReworded.text(in: playground)
        try editors.write(toFile: playground.policies + "/" + file, atomically: false, encoding: .utf8)
        let edit = try PlaygroundAnswerTests.plusAdminsExport.text(in: playground)
        let conflict = try await playground.post(
            "/api/save",
            ["file": file, "files": [file: edit], "versions": loaded]
        )
        let shown = try #require(try conflict.json()["diskVersion"] as? String)
        let overwrite = try await playground.post(
            "/api/save",
            ["file": file, "files": [file: edit], "versions": [file: shown]]
        )
        #expect(overwrite.status == 200)
        #expect(try playground.policyText(file) == edit)
        // The version shown is now itself stale.
        let again = try await playground.post(
            "/api/save",
            ["file": file, "files": [file: editors], "versions": [file: shown]]
        )
        #expect(again.status == 409)
        #expect(try playground.policyText(file) == edit)
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
