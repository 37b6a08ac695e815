import Foundation
import ServingTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The playground reads the tests' response files as `test` does.
///
/// A FIFO with no writer, or a file outside the tests' project, is left out of the responses
/// offered and refused with its line in the tests' answer, and every page load is answered. Before, 32 page loads of a directory whose
/// tests named a FIFO held every connection slot, and a secret named by its absolute path was
/// offered in the response menu.
@Suite struct PlaygroundResponseFileTests {
    @Test func aFIFOAndAFileOutsideAreNotOfferedAndEveryLoadIsAnswered() async throws {
        let elsewhere =
            FileManager.default.temporaryDirectory.path + "/playground-secret-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        try Data(#"{"groups":[],"secret":"SECRET=1"}"#.utf8).write(to: URL(fileURLWithPath: elsewhere + "/secret.json"))

        let playground = try await PlaygroundProcess.start()
        try Self.nameAFIFO(in: playground, andAFileAt: elsewhere + "/secret.json")

        // More loads than the playground serves connections at once, one after another.
        for _ in 0..<40 {
            let answer = try await playground.get("/api/files")
            #expect(answer.status == 200)
        }
        let answer = try await playground.get("/api/files").json()
        let responses = try #require(answer["responses"] as? [[String: String]])
        #expect(
            responses.map { $0["name"] } == [
                "Examples/consumer-member.json", "Examples/no-groups.json", "Examples/organization-admin.json",
                "Examples/sandbox-placeholder.json", "Examples/seat-holder.json", "Examples/several-groups.json",
                "sandbox placeholder",
            ]
        )
        #expect(!responses.contains { $0["text"]?.contains("SECRET") == true })

        let results = try #require(try await playground.post("/api/tests", [:]).json()["tests"] as? [String: Any])
        let files = try #require(results["files"] as? [[String: Any]])
        let team = try #require(files.first { ($0["path"] as? String)?.hasSuffix("team-workspace.tests.json") == true })
        let messages = (team["diagnostics"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        let project = URL(fileURLWithPath: playground.root).resolvingSymlinksInPath().path
        #expect(
            messages == [
                "response file 'Policies/../Examples/pipe.json' is a FIFO, not a regular file (a responseFile must be "
                    + "a regular file in \(project), the project of its test file)",
                "response file '\(elsewhere)/secret.json' is outside \(project), the project of its test file (a "
                    + "responseFile must be a regular file in it; check, test and playground take --allow-outside)",
            ]
        )
    }

    /// Forty whole page loads, five at a time, are each answered, and so is every request after them.
    ///
    /// A load asks for the page, its style, icon and scripts, the files, and four answers (two of
    /// which run the tests that name the FIFO).
    @Test func fortyPageLoadsWithAFIFOResponseFileAreAllAnsweredAndSoIsTheNextRequest() async throws {
        let playground = try await PlaygroundProcess.start()
        try Self.nameAFIFO(in: playground, andAFileAt: playground.root + "/Examples/seat-holder.json")
        let assets = ["/", "/playground.css", "/favicon.svg"] + PlaygroundProcess.scriptPaths + ["/api/files"]
        var statuses: [Int] = []
        for batch in 0..<(40 / 5) {
            statuses += try await withThrowingTaskGroup(of: [Int].self) { group in
                for load in 0..<5 {
                    let page = "load-\(batch)-\(load)"
                    group.addTask {
                        var statuses: [Int] = []
                        for path in assets { statuses.append(try await playground.get(path).status) }
                        for path in ["/api/check", "/api/decision", "/api/tests", "/api/matrix"] {
                            statuses.append(try await playground.post(path, ["page": page]).status)
                        }
                        return statuses
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
        }
        #expect(statuses.count == 40 * (assets.count + 4))
        #expect(Set(statuses) == [200])
        #expect(try await playground.get("/api/files").status == 200)
        let tests = try #require(try await playground.post("/api/tests", [:]).json()["tests"] as? [String: Any])
        #expect(tests["failed"] as? Int == 1)
    }

    /// Makes `Examples/pipe.json` a FIFO with no writer and names it, and `path`, as response files
    /// of the first cases of `team-workspace.tests.json`.
    static func nameAFIFO(in playground: PlaygroundProcess, andAFileAt path: String) throws {
        #expect(mkfifo(playground.root + "/Examples/pipe.json", 0o600) == 0)
        let tests = playground.policies + "/team-workspace.tests.json"
        let text = try String(contentsOfFile: tests, encoding: .utf8)
        let extra = """
              "cases": [
                { "name": "fifo", "responseFile": "../Examples/pipe.json", "expect": { "capabilities": [] } },
                { "name": "secret", "responseFile": "\(path)", "expect": { "capabilities": [] } },
            """
        try Data(text.replacingOccurrences(of: #"  "cases": ["#, with: extra).utf8)
            .write(to: URL(fileURLWithPath: tests))
    }
}
