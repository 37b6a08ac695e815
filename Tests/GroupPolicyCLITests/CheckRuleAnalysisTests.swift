import Foundation
import Testing

/// `check` warns about the rules that can never matter and the capabilities no scenario receives,
/// each at its location; `--strict` makes them errors; a policy whose space is over the budget is
/// not analysed, and one line says so.
@Suite struct CheckRuleAnalysisTests {
    /// `pro` grants only what `all` grants; no one receives `c`.
    static let policy = """
        { "format": "group-policy/v1", "id": "p",
          "capabilities": { "a": "A", "c": "C" },
          "rules": [
            { "id": "all", "capabilities": ["a", "c"] },
            { "id": "pro", "capabilities": ["a"], "match": { "productId": "pro", "role": "*" } },
            { "id": "no-c", "effect": "deny", "capabilities": ["c"] }
          ] }
        """

    static func scratch() throws -> String {
        let directory =
            FileManager.default.temporaryDirectory.path + "/rule-analysis-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(policy.utf8).write(to: URL(fileURLWithPath: directory + "/p.json"))
        return directory
    }

    @Test func redundantRulesAndAlwaysDeniedCapabilitiesAreWarnings() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = try await CLIRunner.run(["check", directory + "/p.json"])
        #expect(output.status == 0)
        #expect(
            output.stderr == """
                \(directory)/p.json:5:5: warning: rules[1]: rule 'pro' is redundant: removing it changes no decision \
                in any scenario (wherever it matches, each capability it grants is granted by another rule or denied)
                \(directory)/p.json:2:31: warning: capabilities.c: capability 'c' is always denied: no scenario \
                receives it (no rule grants it where no deny rule removes it)

                """
        )
        #expect(output.stdout.hasPrefix("checked 1 policy, 0 test files: 0 errors, 2 warnings, 0 invariants hold\n"))

        let strict = try await CLIRunner.run(["check", "--strict", directory + "/p.json"])
        #expect(strict.status == 1)
        #expect(strict.stdout == "checked 1 policy, 0 test files: 2 errors, 0 warnings, 0 invariants hold\n")
    }

    @Test func aSpaceOverTheBudgetIsNotAnalysedAndSaysSo() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = try await CLIRunner.run(["check", "--invariant-budget", "5", directory + "/p.json"])
        #expect(output.status == 0)
        #expect(
            output.stderr
                == "\(directory)/p.json: note: its rules were not analysed for redundancy: its reduced space holds "
                + "more than 5 scenarios, over the budget of 5\n"
        )
    }
}
