import Foundation
import GroupDecisionsTesting
import GroupPolicy
import GroupPolicyTestSupport
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// The shadow in the service: exact rows for a known change, the served answer untouched, resets,
/// candidates that fail to load or reload, and concurrent recording.
@Suite("Shadow: a candidate policy beside the live one")
struct ShadowServiceTests {
    static let live = policyText(
        id: "team",
        capabilities: ["team.templates", "workspace.manage", "workspace.view"],
        rules: """
            [ { "id": "admins-manage", "match": { "groupType": "ORGANIZATION", "role": "ADMIN" },
                "capabilities": ["workspace.manage"] },
              { "id": "members-view", "match": { "groupType": "ORGANIZATION" }, "capabilities": ["workspace.view"] },
              { "id": "templates", "match": { "groupType": "ORGANIZATION" }, "capabilities": ["team.templates"] } ]
            """
    )

    /// Drops `team.templates`, adds `workspace.export` for admins, shows the workspace to consumers,
    /// and hides it from seat holders whose role is NONE.
    static let candidate = policyText(
        id: "team",
        capabilities: ["workspace.export", "workspace.manage", "workspace.view"],
        rules: """
            [ { "id": "admins-manage", "match": { "groupType": "ORGANIZATION", "role": "ADMIN" },
                "capabilities": ["workspace.manage", "workspace.export"] },
              { "id": "members-view", "match": { "groupType": "ORGANIZATION" }, "capabilities": ["workspace.view"] },
              { "id": "consumers-view", "match": { "groupType": "CONSUMER" }, "capabilities": ["workspace.view"] },
              { "id": "no-view-for-none", "effect": "deny", "match": { "role": "NONE" },
                "capabilities": ["workspace.view"] } ]
            """
    )

    static let answers: [String: GetCustomerGroupsResponse] = [
        "admin": GetCustomerGroupsResponse(groups: [Families.group("org1", .organization, [.admin])]),
        "seat": GetCustomerGroupsResponse(groups: [Families.group("org1", .organization, [Role("NONE")])]),
        "family": GetCustomerGroupsResponse(groups: [Families.group("fam1", .consumer)]),
        "both": GetCustomerGroupsResponse(
            groups: [
                Families.group("org2", .organization, [.admin]), Families.group("fam2", .consumer),
                Families.group("org3", .organization),
            ]
        ),
        "nothing": Families.noGroups,
    ]

    /// The policies' directories and stores, each test's own.
    let liveDirectory: PolicyDirectory
    let candidateDirectory: PolicyDirectory
    let liveStore: PolicyStore
    let candidateStore: PolicyStore
    let clock = ManualClock()
    let source = StaticGroupsSource(ShadowServiceTests.answers)

    init() throws {
        liveDirectory = try PolicyDirectory(["team.json": Self.live])
        candidateDirectory = try PolicyDirectory(["team.json": Self.candidate])
        liveStore = try liveDirectory.store()
        candidateStore = try candidateDirectory.store()
    }

    func service(candidate: Bool = true, log: Bool = true) throws -> GroupDecisionService {
        try ServiceHarness(
            source: source,
            clock: clock,
            policies: liveStore,
            decisionLog: log ? try discardingDecisionLog() : nil,
            candidatePolicies: candidate ? candidateStore : nil
        )
        .service
    }

    /// A report of nothing compared since `seconds` past 08:00, with `candidate` as the candidate's revision.
    func emptyReport(candidate: String? = nil, since seconds: Double = 0) -> ShadowReport {
        let since = Date(timeIntervalSince1970: 1_800_000_000 + seconds)
        return emptyShadowReport(liveRevision: liveStore.revision, candidateRevision: candidate, since: since)
    }

    /// Serves each customer in turn and returns the decisions' ids, in the same order.
    @discardableResult
    static func serve(_ service: GroupDecisionService, _ customers: [String]) async throws -> [String] {
        var ids: [String] = []
        for customer in customers {
            ids.append(try await service.decide(customer, environment: .production).decisionID)
        }
        return ids
    }

    @Test("a known change: each row with its rules under both policies, counts and examples")
    func knownChange() async throws {
        let service = try self.service()
        let customers = ["admin", "seat", "family", "both", "nothing", "admin"]
        let ids = try await Self.serve(service, customers)
        let report = await service.settledShadowReport()
        // Each row with its rules under both policies, and its examples as `<decision index> <group id>`.
        let rows: [(String, ShadowReport.Direction, String, [String], [String], Int, String)] = [
            ("team.templates", .lost, "ORGANIZATION", ["templates"], [], 5, "0 org1, 1 org1, 3 org2, 5 org1"),
            ("workspace.export", .gained, "ORGANIZATION", [], ["admins-manage"], 3, "0 org1, 3 org2, 5 org1"),
            ("workspace.view", .gained, "CONSUMER", [], ["consumers-view"], 2, "2 fam1, 3 fam2"),
            ("workspace.view", .lost, "ORGANIZATION", ["members-view"], ["no-view-for-none"], 1, "1 org1"),
        ]
        var expected = emptyReport(candidate: candidateStore.revision)
        expected.decisions = 6
        expected.changedDecisions = 5
        expected.changes = rows.map { capability, direction, type, live, candidate, groups, examples in
            let examples = examples.split(separator: ", ").map { example in
                let parts = example.split(separator: " ")
                let index = Int(parts[0]) ?? 0
                let hash = shadowTestHash(customers[index])
                return ShadowReport.Example(decisionID: ids[index], customerHash: hash, groupID: String(parts[1]))
            }
            return ShadowReport.Change(
                capability: capability,
                direction: direction,
                groupType: type,
                liveRules: live,
                candidateRules: candidate,
                groups: groups,
                decisions: examples.count,
                examples: examples
            )
        }
        #expect(report == expected)
    }

    @Test("the served answer is byte for byte the one a service without a candidate serves")
    func servedAnswerUnchanged() async throws {
        let with = try service()
        let without = try service(candidate: false)
        var random = RandomInputs(seed: 7)
        for _ in 0..<60 {
            let customer = random.pick(Array(Self.answers.keys).sorted())
            let context = random.context()
            let served = try await with.decide(customer, in: context)
            let reference = try await without.decide(customer, in: context)
            // Every decision has an id of its own; apart from it, the bytes are the same.
            #expect(served.decisionID != reference.decisionID)
            for (pretty, provenance) in [(false, false), (false, true), (true, false), (true, true)] {
                let text = { (answer: ServedDecision) in
                    String(decoding: answer.jsonBytes(includingProvenance: provenance, pretty: pretty), as: UTF8.self)
                }
                let expected = text(reference).replacingOccurrences(of: reference.decisionID, with: served.decisionID)
                #expect(text(served) == expected)
            }
            #expect(served.policyRevision == liveStore.revision)
        }
        #expect((await with.settledShadowReport()).decisions == 60)
        #expect((await without.settledShadowReport()).decisions == 0)
    }

    @Test(
        "without a candidate: no candidate revision, nothing counted; one that does not load is left out, set once it loads it counts; without a log: no customer hash"
    )
    func withoutCandidateOrLog() async throws {
        let broken = try PolicyDirectory(["team.json": "{ \"format\": \"group-policy/v1\", "])
        #expect(throws: GroupPolicyError.self) { try broken.store() }
        let service = try self.service(candidate: false)
        try await Self.serve(service, ["admin", "seat"])
        #expect(await service.settledShadowReport() == emptyReport())
        try broken.write("team.json", Self.candidate)
        clock.advance(by: .seconds(5))
        service.candidatePolicies = try broken.store()
        #expect(await service.settledShadowReport() == emptyReport(candidate: candidateStore.revision, since: 5))
        try await Self.serve(service, ["admin"])
        let counted = await service.settledShadowReport()
        #expect(counted.decisions == 1)
        #expect(counted.changedDecisions == 1)
        service.candidatePolicies = nil
        try await Self.serve(service, ["admin"])
        #expect(await service.settledShadowReport() == emptyReport(since: 5))
        let unlogged = try self.service(log: false)
        let ids = try await Self.serve(unlogged, ["seat"])
        let examples = (await unlogged.settledShadowReport()).changes.flatMap(\.examples)
        #expect(
            examples
                == Array(
                    repeating: ShadowReport.Example(decisionID: ids[0], customerHash: nil, groupID: "org1"),
                    count: 2
                )
        )
    }

    @Test("a reset, or a reload of the live policy, starts the report again from now, with the new live revision")
    func resetAndLiveReload() async throws {
        let service = try self.service()
        try await Self.serve(service, ["admin", "seat"])
        #expect((await service.settledShadowReport()).decisions == 2)
        clock.advance(by: .seconds(90))
        service.resetShadowReport()
        #expect(await service.settledShadowReport() == emptyReport(candidate: candidateStore.revision, since: 90))
        try await Self.serve(service, ["family"])
        let afterReset = await service.settledShadowReport()
        #expect(afterReset.decisions == 1)
        #expect(afterReset.changes.map(\.capability) == ["workspace.view"])
        try liveDirectory.write("team.json", Self.candidate)
        guard case .reloaded = liveStore.reload() else {
            Issue.record("the live policy did not reload")
            return
        }
        try await Self.serve(service, ["admin", "seat"])
        let report = await service.settledShadowReport()
        #expect(report.liveRevision == candidateStore.revision)
        #expect(report.decisions == 2)
        #expect(report.changedDecisions == 0)
    }

    @Test("a candidate reload that fails changes nothing; one that succeeds starts the report again")
    func candidateReloads() async throws {
        let service = try self.service()
        try await Self.serve(service, ["admin", "seat", "family"])
        let before = await service.settledShadowReport()
        try candidateDirectory.write("team.json", "{ \"format\": \"group-policy/v1\", \"id\": 7 }")
        guard case .failed = candidateStore.reload() else {
            Issue.record("the broken candidate reloaded")
            return
        }
        #expect((await service.settledShadowReport()) == before)
        // Still compared against the last good version.
        try await Self.serve(service, ["family"])
        let still = await service.settledShadowReport()
        #expect(still.decisions == 4)
        #expect(still.candidateRevision == before.candidateRevision)
        #expect(still.changes.first { $0.groupType == "CONSUMER" }?.decisions == 2)

        clock.advance(by: .seconds(30))
        try candidateDirectory.write("team.json", Self.live)
        guard case .reloaded = candidateStore.reload() else {
            Issue.record("the fixed candidate did not reload")
            return
        }
        #expect(await service.settledShadowReport() == emptyReport(candidate: liveStore.revision, since: 30))
        try await Self.serve(service, ["admin", "seat", "family"])
        let unchanged = await service.settledShadowReport()
        #expect(unchanged.decisions == 3)
        #expect(unchanged.changedDecisions == 0)
    }

    @Test("eight tasks recording at once: every decision and every change counted exactly")
    func concurrentRecording() async throws {
        let service = try self.service()
        let customers = ["admin", "seat", "family", "both", "nothing"]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<120 {
                        let customer = customers[(task + index) % customers.count]
                        _ = try await service.decide(customer, environment: .production)
                    }
                }
            }
            try await group.waitForAll()
        }
        // 960 decisions (the comparison queue holds 1,000), 192 per customer; all but "nothing" change.
        let report = await service.settledShadowReport()
        #expect(report.decisions == 960)
        #expect(report.skippedDecisions == 0)
        #expect(report.changedDecisions == 768)
        let counts = report.changes.map {
            "\($0.capability) \($0.direction) \($0.groupType) \($0.groups)/\($0.decisions)"
        }
        #expect(
            counts == [
                "team.templates lost ORGANIZATION 768/576", "workspace.export gained ORGANIZATION 384/384",
                "workspace.view gained CONSUMER 384/384", "workspace.view lost ORGANIZATION 192/192",
            ]
        )
        #expect(report.changes.allSatisfy { $0.examples.count == 5 })
    }
}
