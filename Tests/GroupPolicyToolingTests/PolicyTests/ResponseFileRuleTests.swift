import Foundation
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy
@testable import GroupPolicyTooling

/// A test case's `responseFile` is a regular file of its test file's project: a FIFO with no
/// writer, a device, a path outside the project or a symbolic link leading out is refused at once
/// with one line naming the file and the rule, and is never opened; `allowsResponseFilesOutside`
/// lifts only the project.
@Suite struct ResponseFileRuleTests {
    /// A scratch folder under the temporary directory, with `Policies/` holding a copy of the
    /// team policy, and `Examples/` the response `r.json`.
    struct Scratch {
        let root: String
        var policies: String { root + "/Policies" }

        init() throws {
            // Resolved, so that messages name the real paths the rule compares.
            let made = try makeTemporaryDirectory("response-file-rule")
            root = URL(fileURLWithPath: made).resolvingSymlinksInPath().path
            try FileManager.default.createDirectory(atPath: root + "/Policies", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: root + "/Examples", withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: repositoryFile("Policies/team-workspace.json"),
                toPath: root + "/Policies/team.json"
            )
            try write(#"{"groups":[]}"#, to: "Examples/r.json")
        }

        func write(_ text: String, to relative: String) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: root + "/" + relative))
        }

        /// `Policies/t.tests.json` with one case per response file, expecting nothing.
        func testFile(_ responseFiles: [String]) throws -> String {
            let cases = responseFiles.enumerated().map { index, file in
                #"{ "name": "c\#(index)", "responseFile": "\#(file)", "expect": { "capabilities": [] } }"#
            }
            try write(
                #"{ "format": "group-policy-tests/v1", "policy": "team.json", "cases": [\#(cases.joined(separator: ", "))] }"#,
                to: "Policies/t.tests.json"
            )
            return policies + "/t.tests.json"
        }

        func remove() { try? FileManager.default.removeItem(atPath: root) }
    }

    /// The messages loading the test file gives, or `[]` when it loads; on a thread of its own, so
    /// that a loader waiting on a FIFO fails the test after a minute instead of hanging the run.
    static func messages(_ path: String, allowingOutside: Bool = false) throws -> [String] {
        final class Box: @unchecked Sendable {
            var messages: [String] = []
        }
        let done = DispatchSemaphore(value: 0)
        let box = Box()
        Thread {
            let messages: [String]
            do throws(GroupPolicyError) {
                _ = try PolicyTestSuite(contentsOfFile: path, allowsResponseFilesOutside: allowingOutside)
                messages = []
            } catch {
                messages = error.diagnostics.map(\.message)
            }
            // Written before the signal, read after it: the semaphore orders the two.
            box.messages = messages
            done.signal()
        }
        .start()
        try #require(done.wait(timeout: .now() + 60) == .success, "loading \(path) did not finish")
        return box.messages
    }

    @Test func aFileOfTheProjectIsRead() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // Outside Git, a test file's project is its directory's parent: `../Examples` is in it.
        #expect(ResponseFileAccess.project(ofTestFile: scratch.policies + "/t.tests.json") == scratch.root)
        #expect(try Self.messages(try scratch.testFile(["../Examples/r.json", "./../Examples/r.json"])) == [])
    }

    @Test func aFIFOWithNoWriterIsRefusedUnopened() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try #require(mkfifo(scratch.root + "/Examples/pipe.json", 0o600) == 0)
        let testFile = try scratch.testFile(["../Examples/pipe.json"])
        let expected =
            "response file '\(scratch.policies)/../Examples/pipe.json' is a FIFO, not a regular file "
            + "(a responseFile must be a regular file in \(scratch.root), the project of its test file)"
        #expect(try Self.messages(testFile) == [expected])
        // Allowing files outside the project does not allow a FIFO.
        #expect(try Self.messages(testFile, allowingOutside: true) == [expected])
    }

    @Test func aPathOutsideTheProjectIsRefused() throws {
        let scratch = try Scratch()
        let elsewhere = try Scratch()
        defer {
            scratch.remove()
            elsewhere.remove()
        }
        try elsewhere.write("SECRET=1", to: "Examples/secret.env")
        let outside = elsewhere.root + "/Examples/secret.env"
        let sibling = URL(fileURLWithPath: elsewhere.root).lastPathComponent
        let testFile = try scratch.testFile([outside, "../../\(sibling)/Examples/r.json"])
        let rule = "(a responseFile must be a regular file in it; check, test and playground take --allow-outside)"
        #expect(
            try Self.messages(testFile) == [
                "response file '\(outside)' is outside \(scratch.root), the project of its test file \(rule)",
                "response file '\(scratch.policies)/../../\(sibling)/Examples/r.json' is outside \(scratch.root), the project of its test file \(rule)",
            ]
        )
        // Allowed outside, the secret is read, and fails to decode as a response.
        #expect(try Self.messages(testFile, allowingOutside: true).count == 1)
    }

    @Test func aSymbolicLinkLeadingOutsideIsRefused() throws {
        let scratch = try Scratch()
        let elsewhere = try Scratch()
        defer {
            scratch.remove()
            elsewhere.remove()
        }
        try FileManager.default.createSymbolicLink(
            atPath: scratch.root + "/Examples/link.json",
            withDestinationPath: elsewhere.root + "/Examples/r.json"
        )
        try FileManager.default.createSymbolicLink(
            atPath: scratch.root + "/Examples/inside.json",
            withDestinationPath: scratch.root + "/Examples/r.json"
        )
        let testFile = try scratch.testFile(["../Examples/link.json", "../Examples/inside.json"])
        #expect(
            try Self.messages(testFile) == [
                "response file '\(scratch.policies)/../Examples/link.json' leads outside \(scratch.root), the project "
                    + "of its test file, to \(elsewhere.root)/Examples/r.json (a responseFile must be a regular file "
                    + "in it; check, test and playground take --allow-outside)"
            ]
        )
        #expect(try Self.messages(testFile, allowingOutside: true) == [])
    }

    @Test func aDeviceIsRefusedUnopened() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let testFile = try scratch.testFile(["/dev/zero"])
        #expect(
            try Self.messages(testFile, allowingOutside: true) == [
                "response file '/dev/zero' is a character device, not a regular file (a responseFile must be a "
                    + "regular file in \(scratch.root), the project of its test file)"
            ]
        )
    }

    /// In a Git work tree the project is the work tree, however deep the test file; a work tree
    /// in a shared directory (here the temporary directory itself) is no project.
    @Test func inAGitWorkTreeTheProjectIsTheWorkTree() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.root + "/a/b", withIntermediateDirectories: true)
        let deep = scratch.root + "/a/b/t.tests.json"
        #expect(ResponseFileAccess.project(ofTestFile: deep) == scratch.root + "/a")
        try FileManager.default.createDirectory(atPath: scratch.root + "/.git", withIntermediateDirectories: true)
        #expect(ResponseFileAccess.project(ofTestFile: deep) == scratch.root)
        // A test file directly in a shared directory is its own project.
        let temporary = URL(fileURLWithPath: NSTemporaryDirectory()).resolvingSymlinksInPath().path
        #expect(ResponseFileAccess.project(ofTestFile: temporary + "/t.tests.json") == temporary)
    }
}
