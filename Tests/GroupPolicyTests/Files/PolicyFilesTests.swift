import Foundation
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

/// Which files are policies: the flat rule of a policy set and the recursive walk of check/test,
/// with links followed, each real file taken once and link loops ending.
@Suite struct PolicyFilesTests {
    static func policy(id: String) -> String {
        #"{ "format": "group-policy/v1", "id": "\#(id)", "capabilities": { "c": "c" }, "#
            + #""rules": [ { "id": "r", "capabilities": ["c"] } ] }"#
    }

    static func file(_ path: String, _ contents: String = policy(id: "p")) throws {
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
    }

    static func link(_ path: String, to destination: String) throws {
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: destination)
    }

    @Test func aPolicySetIsTheJSONFilesDirectlyInTheDirectory() throws {
        let directory = try makeTemporaryDirectory("policy-files")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.file(directory + "/b.json", Self.policy(id: "q"))
        for name in ["a.json", "a.tests.json", "a.schema.json", ".hidden.json", "notes.txt"] {
            try Self.file(directory + "/" + name)
        }
        try FileManager.default.createDirectory(atPath: directory + "/folder.json", withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: directory + "/sub", withIntermediateDirectories: false)
        try Self.file(directory + "/sub/deeper.json")
        // Another name for a.json: the same real file counts once.
        try Self.link(directory + "/same-as-a.json", to: "a.json")
        #expect(try PolicyFiles.policySet(inDirectory: directory) == [directory + "/a.json", directory + "/b.json"])
        #expect(try Policy(contentsOfDirectory: directory).ids == ["p", "q"])
    }

    /// A FIFO named like a policy, in a directory: no walk or policy set opens it (it would wait
    /// for a writer forever); found by neither, the rest loads at once.
    @Test func fifosInADirectoryAreNoPolicyFiles() throws {
        let directory = try makeTemporaryDirectory("policy-files")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.file(directory + "/a.json")
        #expect(mkfifo(directory + "/stream.json", 0o600) == 0)
        #expect(mkfifo(directory + "/stream.tests.json", 0o600) == 0)
        #expect(try PolicyFiles.policySet(inDirectory: directory) == [directory + "/a.json"])
        let found = try PolicyFiles.find(under: [directory])
        #expect(found.policyFiles == [directory + "/a.json"])
        #expect(found.testFiles == [])
        #expect(try Policy(contentsOfDirectory: directory).ids == ["p"])
    }

    @Test func theWalkEndsOnLinkLoopsAndTakesEachFileOnce() throws {
        let directory = try makeTemporaryDirectory("policy-files")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.file(directory + "/team.json")
        try Self.file(directory + "/team.tests.json", "{}")
        try Self.link(directory + "/loop-a", to: ".")
        try Self.link(directory + "/loop-b", to: ".")
        try FileManager.default.createDirectory(atPath: directory + "/sub", withIntermediateDirectories: false)
        try Self.file(directory + "/sub/inner.json")
        try Self.link(directory + "/sub/up", to: "..")
        let found = try PolicyFiles.find(under: [directory])
        #expect(found.policyFiles == [directory + "/sub/inner.json", directory + "/team.json"])
        #expect(found.testFiles == [directory + "/team.tests.json"])
        // Named twice, and again inside a named directory: still once.
        let named = try PolicyFiles.find(under: [directory + "/team.json", directory + "/team.json", directory])
        #expect(named.policyFiles == [directory + "/team.json", directory + "/sub/inner.json"])
        #expect(
            try PolicyFiles.files(under: [directory], matching: PolicyFiles.isTestFileName)
                == [directory + "/team.tests.json"]
        )
    }

    @Test func namedFilesAreTakenByTheirNames() throws {
        let directory = try makeTemporaryDirectory("policy-files")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in ["p.json", "t.tests.json", "s.schema.json", "other.txt"] { try Self.file(directory + "/" + name) }
        let paths = ["p.json", "t.tests.json", "s.schema.json", "other.txt"].map { directory + "/" + $0 }
        let found = try PolicyFiles.find(under: paths)
        #expect(found.policyFiles == [directory + "/p.json", directory + "/other.txt"])
        #expect(found.testFiles == [directory + "/t.tests.json"])
    }

    @Test func theWalkRefusesMissingPathsAndTooDeepTrees() throws {
        let directory = try makeTemporaryDirectory("policy-files")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect {
            try PolicyFiles.find(under: [directory + "/missing"])
        } throws: { error in
            (error as? GroupPolicyError)?.message == "cannot read \(directory)/missing: no such file or directory"
        }
        var deepest = directory
        for _ in 0...PolicyFiles.maximumDepth { deepest += "/d" }
        try FileManager.default.createDirectory(atPath: deepest, withIntermediateDirectories: true)
        #expect {
            try PolicyFiles.find(under: [directory])
        } throws: { error in
            (error as? GroupPolicyError)?.message
                == "\(deepest): directories nested more than 32 levels deep"
        }
    }
}
