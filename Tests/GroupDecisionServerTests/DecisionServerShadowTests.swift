import Foundation
import GroupDecisions
import GroupPolicy
import ServingTestSupport
import ShadowReportReading
import Testing

/// group-decision-server with `--candidate-policies`: `GET /shadow` reports exactly what the candidate changes in the
/// decisions served, `POST /shadow/reset` starts it again, the answers served are those of a server without a
/// candidate, and a candidate that does not load changes nothing but the report.
@Suite("Decision server: shadow", .requires(.pythonCryptography))
struct DecisionServerShadowTests {
    static let salt = "a salt of sixteen bytes or more"

    /// Policies/ with one change: Pro administrators no longer get `workspace.manage-settings`.
    static func candidate(in directory: URL, onlyTeamWorkspace: Bool = false) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let policies = TestFiles.packageRoot.appending(path: "Policies")
        let team = try String(contentsOf: policies.appending(path: "team-workspace.json"), encoding: .utf8)
        let changed = team.replacingOccurrences(
            of: #""capabilities": ["workspace.manage-seats", "workspace.manage-settings", "workspace.export"]"#,
            with: #""capabilities": ["workspace.manage-seats", "workspace.export"]"#
        )
        #expect(changed != team, "Policies/team-workspace.json no longer has the line the candidate changes")
        try Data(changed.utf8).write(to: directory.appending(path: "team-workspace.json"))
        if !onlyTeamWorkspace {
            try FileManager.default.copyItem(
                at: policies.appending(path: "family-sharing.json"),
                to: directory.appending(path: "family-sharing.json")
            )
        }
        return directory
    }

    static func report(_ answer: DecisionServerProcess.Answer) throws -> ShadowReport {
        #expect(answer.status == 200)
        #expect(answer.contentType == "application/json; charset=utf-8")
        return try ShadowReport(jsonBytes: Array(answer.text.utf8))
    }

    @Test(
        "GET /shadow counts each change with its rules and examples; the answers are a server's without a candidate, each with a decisionId of its own, each server's in order"
    )
    func reportAndServedAnswers() async throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "shadow-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let candidatePath = try Self.candidate(in: directory).path
        let store = try await FakeAppStore()
        let shadowed = try await DecisionServerProcess.start(
            appStore: store,
            arguments: ["--candidate-policies", candidatePath, "--decision-log", "-"],
            environment: ["DECISION_LOG_SALT": Self.salt]
        )
        let plain = try await DecisionServerProcess.start(appStore: store)
        let live = try Policy(contentsOf: DecisionServerProcess.policies)
        let candidate = try Policy(contentsOf: candidatePath)

        let empty = try Self.report(try await shadowed.get("/shadow"))
        #expect(empty.liveRevision == live.revision)
        #expect(empty.candidateRevision == candidate.revision)
        #expect(empty.decisions == 0 && empty.changes.isEmpty)

        // Sandbox Pro administrators lose the settings; production aliases nothing, so nothing
        // changes there; the repeated customer comes from the cache and counts again.
        let paths = [
            "/decision?transactionId=ok1", "/decision?transactionId=ok1&environment=production",
            "/decision?transactionId=ingroup_g1", "/decision?transactionId=ingroup_g2&explain=true",
            "/decision?transactionId=ingroup_g1&entitlement=com.example.teams.pro",
        ]
        // The ids each server answered with, in the order of the paths.
        var ids: [String] = []
        var plainIDs: [String] = []
        for path in paths {
            let withShadow = try await shadowed.get(path)
            let without = try await plain.get(path)
            #expect(withShadow.status == 200)
            // Each server gives each decision an id of its own; the decisions are the same.
            ids.append(try #require(withShadow.decisionID))
            plainIDs.append(try #require(without.decisionID))
            #expect(withShadow.decisionText == without.decisionText, "\(path)")
            #expect(withShadow.groupsSource == without.groupsSource, "\(path)")
        }
        let lines = try await shadowed.outputLines(paths.count)
        let hashes = try lines.map { try #require(DecisionServerProcess.field("customer", in: $0)) }
        #expect(lines.map { DecisionServerProcess.field("decisionId", in: $0) } == ids)
        // Every decision of either process has an id of its own, later ids after earlier ones.
        #expect(Set(ids + plainIDs).count == 2 * paths.count)
        for serverIDs in [ids, plainIDs] {
            #expect(zip(serverIDs, serverIDs.dropFirst()).allSatisfy { $0 < $1 })
            #expect(serverIDs.allSatisfy(DecisionIDs.isVersion7))
        }

        let report = try Self.report(try await shadowed.get("/shadow"))
        let examples = [(0, "900000000000000000"), (2, "g1"), (3, "g2"), (4, "g1")].map { index, groupID in
            ShadowReport.Example(decisionID: ids[index], customerHash: hashes[index], groupID: groupID)
        }
        #expect(
            report
                == ShadowReport(
                    liveRevision: live.revision,
                    candidateRevision: candidate.revision,
                    since: empty.since,
                    decisions: 5,
                    changedDecisions: 4,
                    dropped: 0,
                    changes: [
                        ShadowReport.Change(
                            capability: "workspace.manage-settings",
                            direction: .lost,
                            groupType: "ORGANIZATION",
                            liveRules: ["team-workspace/pro-admins-manage"],
                            candidateRules: [],
                            groups: 4,
                            decisions: 4,
                            examples: examples
                        )
                    ]
                )
        )

        let reset = try Self.report(try await shadowed.post("/shadow/reset"))
        #expect(reset.decisions == 0 && reset.changedDecisions == 0 && reset.changes.isEmpty)
        #expect(reset.since >= report.since)
        #expect(reset.candidateRevision == candidate.revision)
        _ = try await shadowed.get("/decision?transactionId=ok1")
        let after = try Self.report(try await shadowed.get("/shadow"))
        #expect(after.decisions == 1 && after.changedDecisions == 1 && after.since == reset.since)

        // Without a candidate the report says so and counts nothing.
        let none = try Self.report(try await plain.get("/shadow"))
        #expect(none.candidateRevision == nil && none.decisions == 0 && none.liveRevision == live.revision)
    }

    @Test(
        "a candidate that does not load: served without, logged once, tried again until it loads; a failed reload keeps it",
        .timeLimit(.minutes(2))
    )
    func candidateThatDoesNotLoad() async throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "shadow-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appending(path: "candidate.json")
        try Data("not json".utf8).write(to: file)
        let server = try await DecisionServerProcess.start(
            arguments: ["--candidate-policies", file.path, "--reload-interval", "1"]
        )
        let served = try await server.get("/decision?transactionId=ok1")
        #expect(served.status == 200)
        let broken = try Self.report(try await server.get("/shadow"))
        #expect(broken.candidateRevision == nil && broken.decisions == 0)
        // Logged once, not again at each retry: the first retry comes a reload interval after
        // startup; three intervals see at least one retry on a busy machine too.
        try await Task.sleep(for: .seconds(3.5))
        let loadFailures = server.logLines().filter { $0.hasPrefix("candidate policies in \(file.path) do not load") }
        #expect(loadFailures.count == 1)
        #expect(
            loadFailures.first?.hasPrefix(
                "candidate policies in \(file.path) do not load, nothing is compared (trying again every 1 s): "
            ) == true
        )

        let good = try Self.candidate(in: directory.appending(path: "good"), onlyTeamWorkspace: true)
        try FileManager.default.removeItem(at: file)
        try FileManager.default.copyItem(at: good.appending(path: "team-workspace.json"), to: file)
        let candidate = try Policy(contentsOf: file.path)
        try await waitUntil { try Self.report(try await server.get("/shadow")).candidateRevision == candidate.revision }
        _ = try await server.get("/decision?transactionId=ok1")
        let counted = try Self.report(try await server.get("/shadow"))
        #expect(counted.decisions == 1 && counted.changedDecisions == 1)
        #expect(counted.changes.map(\.capability) == ["workspace.manage-settings"])

        // A reload that fails keeps the candidate and its counts; the log says why.
        try Data("{ \"format\": 7 }".utf8).write(to: file)
        let failedLine = try await server.logLine { $0.hasPrefix("candidate policies not reloaded, revision ") }
        let failedPrefix = "candidate policies not reloaded, revision \(candidate.revision) is still compared: "
        #expect(failedLine?.hasPrefix(failedPrefix) == true)
        let kept = try Self.report(try await server.get("/shadow"))
        #expect(kept.candidateRevision == candidate.revision && kept.decisions == 1 && kept.since == counted.since)
    }
}
