import Foundation
import Testing

/// Every line the CLI prints about a file is one line, whatever the file's name or content holds:
/// a newline would start a line CI systems read as an annotation (`::error file=…`).
struct OneLineOutputTests {
    @Test func aFileNameAndACapabilityWithNewlinesAndESCStayOnTheDiagnosticsLine() async throws {
        let directory = NSTemporaryDirectory() + "one-line-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/x\n::error file=forged.swift::owned.json"
        let policy = #"""
            { "format": "group-policy/v1", "id": "p", "capabilities": { "a": "A" },
              "rules": [ { "id": "r", "match": { "groupType": "ORGANIZATION" },
                           "capabilities": ["b\n::warning::forged\u001b[31m"] } ] }
            """#
        try policy.write(toFile: file, atomically: false, encoding: .utf8)

        let output = try await CLIRunner.run(["check", file])
        #expect(output.status == 1)
        #expect(
            output.stderr == directory
                + #"/x\n::error file=forged.swift::owned.json:3:33: error: rules[0].capabilities[0]: "#
                + #"undeclared capability 'b\n::warning::forged\u001b[31m'"# + "\n"
        )
        #expect(!output.stderr.split(separator: "\n").contains { $0.hasPrefix("::") })
    }
}
