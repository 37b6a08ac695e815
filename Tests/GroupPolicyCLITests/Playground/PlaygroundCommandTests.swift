import Foundation
import ServingTestSupport
import Testing

/// `group-policy playground` as a command: its arguments, and what it says when it cannot serve.
@Suite struct PlaygroundCommandTests {
    @Test func aPortInUseIsOneErrorLine() async throws {
        let playground = try await PlaygroundProcess.start()
        let output = try await CLIRunner.run(["playground", "Policies", "--port", String(playground.port)])
        #expect(output.status == 2)
        #expect(output.stdout == "")
        #expect(output.stderr == "Error: cannot listen on 127.0.0.1:\(playground.port): Address already in use\n")
    }

    @Test func aPortOutOfRangeIsBadUsage() async throws {
        let output = try await CLIRunner.run(["playground", "Policies", "--port", "65536"])
        #expect(output.status == 2)
        #expect(output.stderr.hasPrefix("Error: --port needs a port number from 0 to 65535, not '65536'\nUsage: "))
    }

    @Test func aMissingDirectoryIsOneErrorLine() async throws {
        let output = try await CLIRunner.run(["playground", "NoSuchPolicies", "--port", "0"])
        #expect(output.status == 2)
        #expect(output.stderr == "Error: NoSuchPolicies is not a directory\n")
    }

    @Test func anInvalidResponseIsRefusedBeforeServing() async throws {
        let output = try await CLIRunner.run(["playground", "Policies", "--port", "0", "--response", "-"], stdin: "{")
        #expect(output.status == 2)
        #expect(output.stderr == "Error: invalid response: <stdin>:1:2: $: expected a string key, found end of input\n")
    }

    /// `--response -` is read once, when the command starts, and offered first.
    @Test func aResponseOnStandardInputIsOfferedFirst() async throws {
        let response = #"{ "groups": [ { "groupId": "7", "groupType": "CONSUMER" } ] }"#
        let playground = try await PlaygroundProcess.start(extraArguments: ["--response", "-"], input: response)
        let files = try await playground.get("/api/files").json()
        let responses = try #require(files["responses"] as? [[String: String]])
        #expect(responses.first == ["name": "<stdin>", "text": response])
        #expect(responses.count == 8)
    }
}
