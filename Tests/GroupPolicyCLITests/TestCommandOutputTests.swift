import Foundation
import Testing

/// What `group-policy test` prints grows with the test file, not with its cases times their
/// decision: each list in a failure line shows ten names and counts the rest.
@Suite struct TestCommandOutputTests {
    @Test func failureLinesStayShortWhateverTheDecisionHolds() async throws {
        let directory =
            FileManager.default.temporaryDirectory.path + "/test-output-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let granted = (0..<2_000).map { "c\($0)" }
        let declared = (granted + ["missing"]).map { #""\#($0)":"\#($0)""# }.joined(separator: ",")
        let list = granted.map { "\"\($0)\"" }.joined(separator: ",")
        let policy =
            #"{"format":"group-policy/v1","id":"p","capabilities":{\#(declared)},"#
            + #""rules":[{"id":"all","capabilities":[\#(list)]}]}"#
        let response = #"{"groups":[{"groupId":"1","groupType":"ORGANIZATION"}]}"#
        let cases = (0..<500).map {
            #"{"name":"case \#($0)","responseFile":"r.json","expect":{"includes":["missing"]}}"#
        }
        let testFile =
            #"{"format":"group-policy-tests/v1","policy":"p.json","cases":["#
            + cases.joined(separator: ",") + "]}"
        for (name, text) in [("p.json", policy), ("r.json", response), ("p.tests.json", testFile)] {
            #expect(FileManager.default.createFile(atPath: directory + "/" + name, contents: Data(text.utf8)))
        }
        let output = try await CLIRunner.run(["test", directory])
        #expect(output.status == 1)
        #expect(output.stderr == "")
        let lines = output.stdout.split(separator: "\n")
        #expect(lines.count == 2 * 500 + 1)
        #expect(lines.last == "0 passed, 500 failed")
        let sorted = granted.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.prefix(10)
        let failure =
            "  includes: expected 'missing' to be granted, got ["
            + sorted.map { "\"\($0)\"" }.joined(separator: ", ") + ", … and 1990 more]"
        for index in 0..<500 {
            #expect(lines[2 * index].hasPrefix("FAIL \(directory)/p.tests.json:"))
            #expect(lines[2 * index].hasSuffix(": case \(index)"))
            #expect(lines[2 * index + 1] == failure)
        }
        // Before the cut, each failure line listed all 2,000 names: 10 MB in all.
        #expect(output.stdout.utf8.count < 200_000)
    }
}
