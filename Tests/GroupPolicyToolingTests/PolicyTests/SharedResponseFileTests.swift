import Foundation
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy
@testable import GroupPolicyTooling

/// A test file whose cases share one large `responseFile` reads and decodes it once: before, 2,000
/// cases sharing a 900 KB file took 1.8 GB.
@Suite struct SharedResponseFileTests {
    /// The process's resident memory in bytes, from `/proc/self/statm`.
    static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test(.cpuBound) func casesSharingAResponseFileReadItOnce() throws {
        let directory = try makeTemporaryDirectory("shared-response")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let groups = (0..<8_000).map { index in
            #"{"groupId":"\#(1_000_000_000_000_000 + index)","groupType":"ORGANIZATION","#
                + #""roles":[{"productId":"com.example.teams.pro","role":"ADMIN"}]}"#
        }
        let response = #"{"groups":["# + groups.joined(separator: ",") + "]}"
        #expect(response.utf8.count > 900_000 && response.utf8.count < 1 << 20)
        try Data(response.utf8).write(to: URL(fileURLWithPath: directory + "/big.json"))
        let cases = (0..<2_000).map { index in
            #"{ "name": "case \#(index)", "responseFile": "\#(index % 2 == 0 ? "big.json" : "./big.json")", "#
                + #""expect": { "excludes": ["team.templates"] } }"#
        }
        let testFile = """
            { "format": "group-policy-tests/v1", "policy": "\(repositoryFile("Policies/team-workspace.json"))",
              "cases": [\(cases.joined(separator: ",\n"))] }
            """
        try Data(testFile.utf8).write(to: URL(fileURLWithPath: directory + "/big.tests.json"))

        let before = try #require(Self.residentBytes())
        let suite = try PolicyTestSuite(contentsOfFile: directory + "/big.tests.json")
        let after = try #require(Self.residentBytes())
        #expect(suite.cases.count == 2_000)
        #expect(suite.cases.allSatisfy { $0.response.groups.count == 8_000 })
        // `big.json` and `./big.json` are one file.
        #expect(suite.responseFilesRead == 1)
        // A generous bound (one decoded copy is a few MB; before, 1.8 GB): the process's memory is
        // shared with whatever runs in parallel, which today includes tests loading 100 MB inputs.
        #expect(after - before < 500 << 20, "resident memory grew by \((after - before) >> 20) MB")

        // Running them evaluates the shared response once: the 2,000 results share one decision
        // (before, each case held a decision of 8,000 groups).
        let results = suite.run()
        let afterRun = try #require(Self.residentBytes())
        #expect(results.count == 2_000)
        #expect(results.allSatisfy { $0.passed && $0.decision.groups.count == 8_000 })
        #expect(afterRun - before < 500 << 20, "resident memory grew by \((afterRun - before) >> 20) MB")
    }

    /// Allowed outside its project, a special file that reports no size stops at the response limit
    /// (1 MiB, not the policy file limit), and a device is refused without being opened.
    @Test func aSpecialResponseFileStopsAtTheResponseLimit() throws {
        try #require(FileManager.default.fileExists(atPath: "/proc/self/pagemap"))
        let testFile = """
            { "format": "group-policy-tests/v1", "policy": "\(repositoryFile("Policies/team-workspace.json"))",
              "cases": [ { "name": "special", "responseFile": "/proc/self/pagemap", "expect": { "capabilities": [] } },
                         { "name": "device", "responseFile": "/dev/zero", "expect": { "capabilities": [] } } ] }
            """
        #expect {
            try PolicyTestSuite(jsonBytes: bytes(testFile), fileName: "t.tests.json", allowsResponseFilesOutside: true)
        } throws: { error in
            (error as? GroupPolicyError)?.diagnostics.map(\.message) == [
                "response file '/proc/self/pagemap' does not load: /proc/self/pagemap: special file of more than "
                    + "1048576 bytes is over the limit of 1048576 bytes",
                "response file '/dev/zero' is a character device, not a regular file (a responseFile must be a "
                    + "regular file in \(Self.project), the project of its test file)",
            ]
        }
    }

    /// The project of a test file named relative to the current directory (the package root under
    /// `swift test`): the package's Git work tree.
    static var project: String {
        URL(fileURLWithPath: repositoryFile("")).resolvingSymlinksInPath().path
    }

    /// The distinct response files of one test file are bounded together.
    ///
    /// The bound is 32 MiB, what the test file itself may hold: each is at most 1 MiB, but thousands of cases could name thousands
    /// of them and keep every decoded one. The 33rd file of 1,048,000 bytes crosses the limit and
    /// is refused there; the cases after it are refused without reading.
    @Test func distinctResponseFilesAreBoundedTogether() throws {
        let directory = try makeTemporaryDirectory("many-responses")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let body = Data((#"{"groups":[]}"# + String(repeating: " ", count: 1_048_000 - 13)).utf8)
        for index in 0..<40 { try body.write(to: URL(fileURLWithPath: directory + "/r\(index).json")) }
        let cases = (0..<40).map { index in
            #"{ "name": "case \#(index)", "responseFile": "r\#(index).json", "expect": { "capabilities": [] } }"#
        }
        let testFile = """
            { "format": "group-policy-tests/v1", "policy": "\(repositoryFile("Policies/team-workspace.json"))",
              "cases": [\(cases.joined(separator: ",\n"))] }
            """
        try Data(testFile.utf8).write(to: URL(fileURLWithPath: directory + "/many.tests.json"))
        #expect {
            try PolicyTestSuite(contentsOfFile: directory + "/many.tests.json")
        } throws: { error in
            let errors = (error as? GroupPolicyError)?.diagnostics.filter { $0.severity == .error } ?? []
            return errors.count == 8 && errors.allSatisfy { $0.kind == .limitExceeded }
                && errors[0].jsonPath == "cases[32].responseFile"
                && errors[0].message
                    == "response file '\(directory)/r32.json' does not load: the test file's response files hold more "
                    + "than 33554432 bytes together, over the limit of 33554432 bytes"
        }
    }

    /// Hard links to one response file are one file: 2,000 hard links to a 1 MiB response were
    /// read and decoded 2,000 times (3.3 GB).
    @Test func hardLinksToAResponseFileAreOneFile() throws {
        let directory = try makeTemporaryDirectory("linked-responses")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let response = #"{"groups":[{"groupId":"1","groupType":"ORGANIZATION","roles":[]}]}"#
        try Data(response.utf8).write(to: URL(fileURLWithPath: directory + "/r.json"))
        try Data(response.utf8).write(to: URL(fileURLWithPath: directory + "/copy.json"))
        for index in 0..<3 {
            try FileManager.default.linkItem(atPath: directory + "/r.json", toPath: directory + "/link\(index).json")
        }
        let cases = ["r.json", "link0.json", "link1.json", "link2.json", "copy.json"].map { file in
            #"{ "name": "\#(file)", "responseFile": "\#(file)", "expect": { "capabilities": [] } }"#
        }
        let testFile = """
            { "format": "group-policy-tests/v1", "policy": "\(repositoryFile("Policies/team-workspace.json"))",
              "cases": [\(cases.joined(separator: ",\n"))] }
            """
        try Data(testFile.utf8).write(to: URL(fileURLWithPath: directory + "/t.tests.json"))
        let suite = try PolicyTestSuite(contentsOfFile: directory + "/t.tests.json")
        #expect(suite.cases.count == 5)
        #expect(suite.responseFilesRead == 2)
    }

    /// Cases evaluating too many groups are refused while loading.
    ///
    /// 20,000 cases sharing a 1 MiB response, each with its own context, were evaluated one by one:
    /// 400 million groups, killed for memory. The work is counted while loading and refused.
    @Test func casesEvaluatingTooManyGroupsAreRefusedWhileLoading() throws {
        let groups = (0..<1_000).map { #"{"groupId":"\#($0)","groupType":"ORGANIZATION","roles":[]}"# }
        let response = #"{"groups":["# + groups.joined(separator: ",") + "]}"
        let directory = try makeTemporaryDirectory("many-contexts")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(response.utf8).write(to: URL(fileURLWithPath: directory + "/r.json"))
        func testFile(contexts: Int) -> String {
            let cases = (0..<3_000).map { index in
                #"{ "name": "c\#(index)", "responseFile": "r.json", "#
                    + #""context": { "entitlements": ["e\#(index % contexts)"] }, "expect": { "capabilities": [] } }"#
            }
            return """
                { "format": "group-policy-tests/v1", "policy": "\(repositoryFile("Policies/team-workspace.json"))",
                  "cases": [\(cases.joined(separator: ",\n"))] }
                """
        }
        // 2,000 distinct contexts of 1,000 groups: exactly at the limit.
        try Data(testFile(contexts: 2_000).utf8).write(to: URL(fileURLWithPath: directory + "/ok.tests.json"))
        #expect(try PolicyTestSuite(contentsOfFile: directory + "/ok.tests.json").cases.count == 3_000)

        try Data(testFile(contexts: 3_000).utf8).write(to: URL(fileURLWithPath: directory + "/many.tests.json"))
        #expect {
            try PolicyTestSuite(contentsOfFile: directory + "/many.tests.json")
        } throws: { error in
            (error as? GroupPolicyError)?.diagnostics.map(\.description) == [
                "\(directory)/many.tests.json:2:12: error: cases: the cases evaluate more than 2000000 groups and "
                    + "role entries (each distinct response and context once), over the limit of 2000000; "
                    + "share contexts or split the file"
            ]
        }
    }
}
