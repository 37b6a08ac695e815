import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `check` and `test` refuse a test case's `responseFile` that is a FIFO with no writer or a path
/// outside its test file's project, at once and with one line each; before, a FIFO held both
/// commands for good, and any absolute path was read.
@Suite struct ResponseFileRuleCommandTests {
    /// A scratch folder holding the team policy, a FIFO no one writes to, and a test file naming
    /// the FIFO and a file of another scratch folder; the other folder's path.
    static func scratch() throws -> (directory: String, elsewhere: String) {
        func make(_ prefix: String) throws -> String {
            let path = FileManager.default.temporaryDirectory.path + "/\(prefix)-\(UInt64.random(in: 0...UInt64.max))"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            return URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        }
        let directory = try make("response-rule")
        let elsewhere = try make("response-rule-elsewhere")
        try FileManager.default.copyItem(
            atPath: CLIRunner.packageRoot + "/Policies/team-workspace.json",
            toPath: directory + "/team.json"
        )
        try FileManager.default.copyItem(
            atPath: CLIRunner.packageRoot + "/Examples/organization-admin.json",
            toPath: elsewhere + "/secret.json"
        )
        #expect(mkfifo(directory + "/pipe.json", 0o600) == 0)
        try Data(
            """
            { "format": "group-policy-tests/v1", "policy": "team.json",
              "cases": [ { "name": "fifo", "responseFile": "pipe.json", "expect": { "capabilities": [] } },
                         { "name": "outside", "responseFile": "\(elsewhere)/secret.json",
                           "expect": { "includes": ["workspace.view"] } } ] }
            """.utf8
        ).write(to: URL(fileURLWithPath: directory + "/t.tests.json"))
        return (directory, elsewhere)
    }

    /// Runs the binary under `timeout`, so that a command waiting on the FIFO fails the test
    /// (status 124) instead of hanging the run.
    static func run(_ arguments: [String]) async throws -> CLIRunner.Output {
        try await CLIRunner.run(["60", CLIRunner.binary] + arguments, executable: "/usr/bin/timeout")
    }

    static func lines(_ directory: String, _ elsewhere: String) -> String {
        "\(directory)/t.tests.json:2:48: error: cases[0].responseFile: response file '\(directory)/pipe.json' is a "
            + "FIFO, not a regular file (a responseFile must be a regular file in \(directory), the project of its "
            + "test file)\n"
            + "\(directory)/t.tests.json:3:51: error: cases[1].responseFile: response file '\(elsewhere)/secret.json' "
            + "is outside \(directory), the project of its test file (a responseFile must be a regular file in it; "
            + "check, test and playground take --allow-outside)\n"
    }

    @Test func testRefusesAFIFOAndAFileOutsideAtOnce() async throws {
        let (directory, elsewhere) = try Self.scratch()
        defer {
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: elsewhere)
        }
        let output = try await Self.run(["test", directory])
        #expect(output.status == 1)
        #expect(output.stdout == "FAIL \(directory)/t.tests.json: the test file does not load\n0 passed, 1 failed\n")
        #expect(output.stderr == Self.lines(directory, elsewhere))
    }

    @Test func checkRefusesAFIFOAndAFileOutsideAtOnce() async throws {
        let (directory, elsewhere) = try Self.scratch()
        defer {
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: elsewhere)
        }
        let output = try await Self.run(["check", directory])
        #expect(output.status == 1)
        #expect(output.stdout == "checked 1 policy, 1 test file: 2 errors, 0 warnings, 5 invariants hold\n")
        #expect(output.stderr == Self.lines(directory, elsewhere))
    }

    /// `--allow-outside` reads the file outside the project; the FIFO stays refused.
    @Test func allowOutsideLiftsOnlyTheProject() async throws {
        let (directory, elsewhere) = try Self.scratch()
        defer {
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: elsewhere)
        }
        for command in ["check", "test"] {
            let output = try await Self.run([command, "--allow-outside", directory])
            #expect(output.status == 1)
            #expect(
                output.stderr
                    == "\(directory)/t.tests.json:2:48: error: cases[0].responseFile: response file "
                    + "'\(directory)/pipe.json' is a FIFO, not a regular file (a responseFile must be a regular file "
                    + "in \(directory), the project of its test file)\n"
            )
        }
        try FileManager.default.removeItem(atPath: directory + "/pipe.json")
        try FileManager.default.copyItem(
            atPath: CLIRunner.packageRoot + "/Examples/no-groups.json",
            toPath: directory + "/pipe.json"
        )
        let output = try await Self.run(["test", "--allow-outside", directory])
        #expect(output.status == 0)
        #expect(output.stdout == "2 passed, 0 failed\n")
    }
}
