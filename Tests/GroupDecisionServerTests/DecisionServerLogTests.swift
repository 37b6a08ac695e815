import Foundation
import ServingTestSupport
import Testing

/// group-decision-server's logs when their readers stall or their files misbehave: logging never
/// holds an answer or a connection, and what is lost is counted in a line.
@Suite("Decision server: logs", .requires(.pythonCryptography))
struct DecisionServerLogTests {
    static let salt = "a salt of sixteen bytes or more"

    @Test(
        "--decision-log - with a standard output nobody reads: every request is answered and closed; drops are one line",
        .timeLimit(.minutes(3))
    )
    func unreadStandardOutput() async throws {
        let server = try await DecisionServerProcess.start(
            arguments: ["--decision-log", "-", "--log-buffer", "4096"],
            environment: ["DECISION_LOG_SALT": Self.salt],
            output: .unread
        )
        // A 4 KiB pipe and a 4 KiB buffer hold about 25 records. Before the log had a buffer, the
        // decisions blocked in write() on Swift's few cooperative threads once the pipe was full,
        // and every later request, a 404 too, was answered 504 after 30 seconds.
        let answered = try await Self.answered(server, 200) {
            $0 % 10 == 9 ? ("/nope", 404) : ("/decision?transactionId=ok1", 200)
        }
        #expect(answered == 200)
        let report = try await server.logLine { $0.hasPrefix("decision log: ") }
        let drops = /decision log: ([0-9]+) records? dropped \(its reader does not keep up\)/
        let dropped = try #require(report?.wholeMatch(of: drops).flatMap { Int($0.1) })
        #expect((1...180).contains(dropped), "\(report ?? "")")
    }

    @Test(
        "a standard error nobody reads: connections still close and new ones are served; drops are one line",
        .timeLimit(.minutes(3))
    )
    func unreadStandardError() async throws {
        let server = try await DecisionServerProcess.start(
            arguments: ["--max-connections", "4", "--log-buffer", "4096"],
            errors: .unread
        )
        // About 90 access-log lines fill the 4 KiB pipe. Before the log had a buffer, each later
        // connection's thread blocked in write() after its answer, never closed its connection,
        // and held its slot: after four of them every new connection was answered 503.
        #expect(try await Self.answered(server, 300) { _ in ("/nope", 404) } == 300)
        // The report is queued beyond the buffer, so it arrives once standard error is read again.
        server.startReadingErrors()
        let report = try await server.logLine { $0.hasPrefix("log: ") }
        let dropped = try #require(report?.firstMatch(of: /^log: ([0-9]+) lines? dropped/).flatMap { Int($0.1) })
        #expect((1...300).contains(dropped), "\(report ?? "")")
        let accessLines = server.logLines().filter { $0.hasPrefix("GET /nope 404 ") }
        #expect(accessLines.count + dropped <= 300)
        #expect(accessLines.allSatisfy { $0.hasSuffix(" ms") })
    }

    @Test("--decision-log /dev/full: the records not written are reported in a line")
    func deviceFull() async throws {
        let server = try await DecisionServerProcess.start(
            arguments: ["--decision-log", "/dev/full"],
            environment: ["DECISION_LOG_SALT": Self.salt]
        )
        #expect(try await server.get("/decision?transactionId=ok1").status == 200)
        let report = try await server.logLine { $0.hasPrefix("decision log: ") }
        #expect(report == "decision log: 1 record not written: No space left on device")
    }

    @Test(
        "--decision-log FILE: kept while the path names it; renamed away, within seconds records go to a new file there"
    )
    func reopensAfterRename() async throws {
        let directory = NSTemporaryDirectory() + "decision-rotation-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/decisions.jsonl"
        let server = try await DecisionServerProcess.start(
            arguments: ["--decision-log", path],
            environment: ["DECISION_LOG_SALT": Self.salt]
        )
        func lines(_ file: String) -> [String] {
            ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        #expect(try await server.get("/decision?transactionId=ok1").status == 200)
        try await waitUntil { !lines(path).isEmpty }
        // Past the check's second, the same file at the path keeps its records.
        try await Task.sleep(for: .milliseconds(1100))
        #expect(try await server.get("/decision?transactionId=ok1").status == 200)
        try await waitUntil { lines(path).count == 2 }
        try FileManager.default.moveItem(atPath: path, toPath: path + ".1")
        // The path is checked at most once a second: decisions until one lands in a new file there.
        var sent = 0
        try await waitUntil {
            #expect(try await server.get("/decision?transactionId=ok1").status == 200)
            sent += 1
            try await Task.sleep(for: .milliseconds(100))
            return !lines(path).isEmpty
        }
        let renamed = lines(path + ".1")
        let reopened = lines(path)
        #expect(!reopened.isEmpty, "no record reached a new file at the path")
        #expect(renamed.count + reopened.count == 2 + sent)
        #expect((renamed + reopened).allSatisfy { $0.hasPrefix(#"{"time":""#) && $0.contains(#""source":"#) })
    }

    /// How many of `count` requests (the n-th asks `request(n)`'s path) were answered whole with
    /// the status expected, before the first that was not (which is recorded).
    static func answered(
        _ server: DecisionServerProcess,
        _ count: Int,
        _ request: (Int) -> (path: String, status: Int)
    ) async throws -> Int {
        for index in 0..<count {
            let (path, status) = request(index)
            let answer = try await server.get(path)
            guard answer.error == nil, answer.status == status else {
                Issue.record("request \(index): \(answer.raw.prefix(40).debugDescription), errno \(answer.error ?? 0)")
                return index
            }
        }
        return count
    }
}
