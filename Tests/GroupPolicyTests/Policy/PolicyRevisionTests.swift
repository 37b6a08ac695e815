import Foundation
import GroupPolicyBasics
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

/// The policy revision: 64-bit FNV-1a over each file's name and bytes, stable across directories,
/// and exposed by the store on every reload.
@Suite struct PolicyRevisionTests {
    @Test func knownValues() throws {
        // Computed independently (Python) from the documented definition.
        #expect(try Policy(contentsOf: repositoryFile("Policies/family-sharing.json")).revision == "49c9b1f4e538bd3a")
        #expect(try Policy(contentsOf: repositoryFile("Policies")).revision == "ec499e3986364ea5")
        var empty = PolicyRevision()
        empty.add(fileName: "", bytes: [])
        #expect(empty.hex == "88201fb960ff6465")
        var small = PolicyRevision()
        small.add(fileName: "dir/a.json", bytes: Array("{}".utf8))
        #expect(small.hex == "d8d542cf8eff414c")
    }

    @Test func sameFilesElsewhereSameRevision() throws {
        let directory = try makeTemporaryDirectory("policy-revision")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in ["family-sharing.json", "team-workspace.json"] {
            try FileManager.default.copyItem(atPath: repositoryFile("Policies/\(name)"), toPath: directory + "/" + name)
        }
        #expect(try Policy(contentsOf: directory).revision == "ec499e3986364ea5")
        // One byte more (a trailing newline) is another revision.
        let handle = try #require(FileHandle(forWritingAtPath: directory + "/team-workspace.json"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("\n".utf8))
        try handle.close()
        #expect(try Policy(contentsOf: directory).revision != "ec499e3986364ea5")
    }

    @Test func storeExposesTheRevisionOnEveryReload() throws {
        let (directory, file) = try PolicyStoreTests.directory(with: PolicyStoreTests.versionA)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try PolicyStore(contentsOf: directory)
        var expectedA = PolicyRevision()
        expectedA.add(fileName: "policy.json", bytes: Array(PolicyStoreTests.versionA.utf8))
        #expect(store.revision == expectedA.hex)
        try PolicyStoreTests.write(PolicyStoreTests.versionB, to: file)
        _ = store.reload()
        var expectedB = PolicyRevision()
        expectedB.add(fileName: "policy.json", bytes: Array(PolicyStoreTests.versionB.utf8))
        #expect(store.revision == expectedB.hex)
        #expect(store.current.revision == expectedB.hex)
    }

    @Test func decisionJSONUnchangedUnlessFreshnessIsKnown() throws {
        let policy = try Policy(contentsOf: repositoryFile("Policies/family-sharing.json"))
        let response = GetCustomerGroupsResponse(groups: [GroupEntry(groupID: "g1", groupType: .consumer)])
        let decision = policy.evaluate(response, in: EvaluationContext(environment: .sandbox))
        let plain =
            #"{"capabilities":["family.shared-lists","family.space"],"groups":[{"groupId":"g1","groupType":"CONSUMER","capabilities":["family.shared-lists","family.space"]}],"workspaces":[{"workspace":"family","groupId":"g1","role":"member"}],"notes":[]}"#
        #expect(decision.jsonString(pretty: false) == plain)
        let trailing: [(key: String, value: String)] = [
            ("groupsSource", "stale"),
            ("groupsFetchedAt", Timestamp.rfc3339(Date(timeIntervalSince1970: 1_800_000_000.5))),
            ("policyRevision", policy.revision),
        ]
        #expect(
            String(
                decoding: decision.jsonBytes(includingProvenance: false, pretty: false, trailingMembers: trailing),
                as: UTF8.self
            )
                == plain.dropLast()
                + #","groupsSource":"stale","groupsFetchedAt":"2027-01-15T08:00:00.500Z","policyRevision":"49c9b1f4e538bd3a"}"#
        )
    }
}
