import Foundation
import ServingTestSupport
import Testing

/// Every input of the playground is held to the CLI's limits and checks, with the line the CLI
/// prints after `Error: ` (or, for a policy, the diagnostic `check` prints) for the same input.
@Suite struct PlaygroundInputLimitTests {
    /// The CLI's one error line for these arguments, without `Error: `.
    static func cliError(_ arguments: [String]) async throws -> String {
        let output = try await CLIRunner.run(arguments)
        let line = try #require(output.stderr.split(separator: "\n").first)
        #expect(line.hasPrefix("Error: "))
        return String(line.dropFirst("Error: ".count))
    }

    /// Writes `text` to a file of the scratch folder and returns its path.
    static func write(_ text: String, _ name: String, in playground: PlaygroundProcess) throws -> String {
        let path = playground.root + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aResponseOverTheLimit() async throws {
        let playground = try await PlaygroundProcess.start()
        let text = "{\"groups\": []" + String(repeating: " ", count: 1 << 20) + "}"
        let path = try Self.write(text, "big-response.json", in: playground)
        let answer = try await playground.post("/api/decision", ["response": text, "responseName": path])
        #expect(answer.status == 200)
        let expected = try await Self.cliError(["eval", "--policy", playground.policies, "--response", path])
        #expect(expected == "\(path): file of \(text.utf8.count) bytes is over the limit of \(1 << 20) bytes")
        #expect(try answer.error() == expected)
    }

    @Test func anInvalidResponse() async throws {
        let playground = try await PlaygroundProcess.start()
        let text = "{\"groups\": [}"
        let path = try Self.write(text, "bad.json", in: playground)
        let answer = try await playground.post("/api/decision", ["response": text, "responseName": path])
        let expected = try await Self.cliError(["eval", "--policy", playground.policies, "--response", path])
        #expect(expected == "invalid response: \(path):1:13: groups[0]: expected a value, found '}'")
        #expect(try answer.error() == expected)
    }

    @Test func anUnknownEnvironment() async throws {
        let playground = try await PlaygroundProcess.start()
        let answer = try await playground.post(
            "/api/decision",
            try playground.customer("seat-holder.json", environment: "staging")
        )
        let expected = try await Self.cliError([
            "eval", "--policy", playground.policies, "--response", playground.root + "/Examples/seat-holder.json",
            "--environment", "staging",
        ])
        #expect(expected == "unknown environment 'staging' (use production or sandbox)")
        #expect(try answer.error() == expected)
    }

    @Test(arguments: [("family.spaces", nil), ("family.space", "42")] as [(String, String?)])
    func anUndeclaredCapabilityOrAMissingGroup(capability: String, group: String?) async throws {
        let playground = try await PlaygroundProcess.start()
        var body = try playground.customer("seat-holder.json")
        body["capability"] = capability
        body["group"] = group
        let answer = try await playground.post("/api/explain", body)
        let expected = try await Self.cliError(
            [
                "explain", "--policy", playground.policies, "--response",
                playground.root + "/Examples/seat-holder.json",
                "--capability", capability,
            ] + (group.map { ["--group", $0] } ?? [])
        )
        #expect(try answer.error() == expected)
    }

    /// A policy edit over the size limit gets the diagnostic `check` prints for a file of that size.
    ///
    /// Heavy: the 32 MiB body is read, decoded and weighed within the playground's 10 s deadline,
    /// which a debug build beside two other heavy tests on a busy machine could miss.
    @Test(.heavy) func aPolicyEditOverTheLimit() async throws {
        let playground = try await PlaygroundProcess.start()
        let saved = try playground.policyText("team-workspace.json")
        let large = saved + String(repeating: " ", count: 32 << 20)
        let answer = try await playground.post("/api/check", ["files": ["team-workspace.json": large]])
        let check = try #require(try answer.json()["check"] as? [String: Any])
        let copy = playground.root + "/Large"
        try FileManager.default.copyItem(atPath: playground.policies, toPath: copy)
        try large.write(toFile: copy + "/team-workspace.json", atomically: true, encoding: .utf8)
        let cli = try await CLIRunner.run(["check", copy])
        let lines = cli.stderr.split(separator: "\n").map { $0.replacingOccurrences(of: copy, with: "Policies") }
        #expect(
            lines.first
                == "Policies/team-workspace.json:1:1: error: $: file of \(large.utf8.count) bytes is over the limit of "
                + "\(32 << 20) bytes"
        )
        #expect(try PlaygroundAnswerTests.descriptions(check) == lines)
    }
}
