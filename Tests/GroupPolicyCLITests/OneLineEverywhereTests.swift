import Foundation
import Testing

/// One line means one line on every path the CLI prints a name it was given: a file that does not
/// load under `test`, an empty directory, a usage error, the diff table, and the explanation text
/// that quotes Apple's group ids.
struct OneLineEverywhereTests {
    static let forged = "\n::error file=forged.swift::owned\u{1B}[2J"
    static let escaped = #"\n::error file=forged.swift::owned\u001b[2J"#

    static func temporaryDirectory() throws -> String {
        let directory = NSTemporaryDirectory() + "one-line-everywhere-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    static func noForgedLine(_ text: String) -> Bool {
        !text.split(separator: "\n").contains { $0.hasPrefix("::") } && !text.contains("\u{1B}")
    }

    @Test func aTestFileThatDoesNotLoadIsNamedOnOneLine() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/x\(Self.forged).tests.json"
        try "{".write(toFile: file, atomically: false, encoding: .utf8)
        let output = try await CLIRunner.run(["test", file])
        #expect(output.status == 1)
        #expect(
            output.stdout == "FAIL \(directory)/x\(Self.escaped).tests.json: the test file does not load\n"
                + "0 passed, 1 failed\n"
        )
        #expect(Self.noForgedLine(output.stdout + output.stderr))
    }

    @Test func anEmptyDirectoryIsNamedOnOneLine() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let empty = directory + "/empty\(Self.forged)"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        let test = try await CLIRunner.run(["test", empty])
        #expect(test.stderr == "no test files (*.tests.json) under \(directory)/empty\(Self.escaped)\n")
        let check = try await CLIRunner.run(["check", empty])
        #expect(check.stderr == "no policy or test files under \(directory)/empty\(Self.escaped)\n")
    }

    @Test func aUsageErrorQuotesTheArgumentOnOneLine() async throws {
        let output = try await CLIRunner.run(
            [
                "eval", "--policy", "Policies/team-workspace.json", "--response", "-", "--environment",
                "x\(Self.forged)",
            ],
            stdin: #"{"groups":[]}"#
        )
        #expect(output.status == 2)
        #expect(
            output.stderr.split(separator: "\n").first
                == "Error: unknown environment 'x\(Self.escaped)' (use production or sandbox)"
        )
        #expect(output.stderr.split(separator: "\n").count == 3)
        #expect(Self.noForgedLine(output.stderr))
    }

    @Test func theDiffTableQuotesPolicyValuesOnOneLine() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let original = try String(
            contentsOfFile: CLIRunner.packageRoot + "/Policies/team-workspace.json",
            encoding: .utf8
        )
        let changed = original.replacingOccurrences(
            of: #""productId": ["com.example.teams.pro", "com.example.teams.plus"]"#,
            with: #""productId": ["com.example.teams.pro\n::error file=forged.swift::owned\u001b[2J"]"#
        )
        #expect(changed != original)
        let file = directory + "/changed.json"
        try changed.write(toFile: file, atomically: false, encoding: .utf8)
        let output = try await CLIRunner.run(["diff", "Policies/team-workspace.json", file])
        #expect(output.status == 0)
        #expect(output.stdout.contains("com.example.teams.pro\(Self.escaped):*"))
        #expect(Self.noForgedLine(output.stdout))
    }

    @Test func theExplanationQuotesApplesGroupIDOnOneLine() async throws {
        let response =
            #"{"groups":[{"groupId":"g\n::error file=forged.swift::owned\u001b[2J","#
            + #""groupType":"ORGANIZATION","roles":[{"productId":"com.example.teams.pro","role":"ADMIN"}]}]}"#
        let output = try await CLIRunner.run(
            [
                "explain", "--policy", "Policies/team-workspace.json", "--response", "-", "--capability",
                "workspace.view",
            ],
            stdin: response
        )
        #expect(output.status == 0)
        #expect(
            output.stdout == "capability workspace.view: granted in 1 of 1 group\n\n"
                + "group g\(Self.escaped) (ORGANIZATION): granted by rule 'seat-holders-view' through "
                + "com.example.teams.pro ADMIN\n"
        )
    }
}
