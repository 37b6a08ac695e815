import Foundation
import Testing

/// `eval --explain` prints at most a million grants and denials: a policy and a response within
/// their own limits can otherwise yield gigabytes of provenance (each group times each rule naming
/// its products), and the command grew past 5 GB printing them.
@Suite struct EvalProvenanceLimitTests {
    @Test func aDecisionWithMoreProvenanceThanTheLimitIsRefusedInOneLine() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "eval-provenance-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // 101 capabilities granted in every ORGANIZATION group through its one role entry, in
        // 9,901 groups: 1,000,001 grants.
        let names = (0..<101).map { "c\($0)" }
        let capabilities = names.map { "\"\($0)\": \"capability \($0)\"" }.joined(separator: ", ")
        let granted = names.map { "\"\($0)\"" }.joined(separator: ", ")
        let policy = directory.appendingPathComponent("wide.json")
        try Data(
            """
            { "format": "group-policy/v1", "id": "wide", "capabilities": { \(capabilities) },
              "rules": [ { "id": "everyone", "match": { "groupType": "ORGANIZATION", "productId": "*", "role": "*" },
                           "capabilities": [ \(granted) ] } ] }
            """.utf8
        ).write(to: policy)
        let groups = (0..<9_901).map { index in
            #"{"groupId":"\#(100_000_000_000_000_000 + index)","groupType":"ORGANIZATION","roles":[{"productId":"p","role":"ADMIN"}]}"#
        }
        let response = #"{"groups":["# + groups.joined(separator: ",") + "]}"

        let output = try await CLIRunner.run(
            ["eval", "--policy", policy.path, "--response", "-", "--explain"],
            stdin: response
        )
        #expect(output.status == 2)
        #expect(output.stdout == "")
        #expect(
            output.stderr
                == "Error: the decision has 1000001 grants and denials; --explain prints at most 1000000 "
                + "(the limit on provenance entries): explain one capability with 'group-policy explain', "
                + "or evaluate without --explain\n"
        )

        // Without --explain the same decision prints: 101 capabilities.
        let plain = try await CLIRunner.run(["eval", "--policy", policy.path, "--response", "-"], stdin: response)
        #expect(plain.status == 0)
        #expect(plain.stdout.hasPrefix("{\n  \"capabilities\": [\n    \"c0\",\n"))
    }
}
