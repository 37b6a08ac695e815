import Foundation
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// The served Decision's JSON: the Decision's own, then the freshness keys, byte for byte as the
/// Decision wrote them when it carried them itself.
@Suite("Served decision JSON")
struct ServedDecisionTests {
    static let decisionID = "019d1b7e-5a3c-7b21-8f4e-2c9a61d0b7f3"

    static func served(
        _ source: ServedDecision.Source,
        decisionID: String? = ServedDecisionTests.decisionID
    ) throws -> ServedDecision {
        let policy = try Policy(contentsOf: TestFiles.packageRoot.appending(path: "Policies/family-sharing.json").path)
        let groups = Families.member
        return ServedDecision(
            decision: policy.evaluate(groups, in: EvaluationContext(environment: .sandbox)),
            source: source,
            fetchedAt: Date(timeIntervalSince1970: 1_800_000_000.5),
            groups: groups,
            policy: policy,
            decisionID: decisionID
        )
    }

    @Test("pretty, with provenance: the Decision's bytes, then the keys after notes, two-space indented, as before")
    func prettyWithProvenance() throws {
        let served = try Self.served(.stale)
        let decision = served.decision.jsonString(includingProvenance: true)
        #expect(decision.hasSuffix("\n  \"notes\": []\n}"))
        #expect(
            served.jsonString(includingProvenance: true)
                == decision.dropLast(2)
                    + """
                    ,
                      "groupsSource": "stale",
                      "groupsFetchedAt": "2027-01-15T08:00:00.500Z",
                      "policyRevision": "49c9b1f4e538bd3a",
                      "decisionId": "019d1b7e-5a3c-7b21-8f4e-2c9a61d0b7f3"
                    }
                    """
        )
    }

    @Test("compact: the Decision's bytes, then the four keys; jsonString and jsonBytes agree")
    func compact() throws {
        for source in [ServedDecision.Source.live, .cache, .stale] {
            let served = try Self.served(source)
            let expected =
                served.decision.jsonString(pretty: false).dropLast()
                + #","groupsSource":"\#(source)","groupsFetchedAt":"2027-01-15T08:00:00.500Z","#
                + #""policyRevision":"49c9b1f4e538bd3a","decisionId":"019d1b7e-5a3c-7b21-8f4e-2c9a61d0b7f3"}"#
            #expect(served.jsonString(pretty: false) == expected)
            #expect(served.jsonBytes(pretty: false) == Array(expected.utf8))
            #expect(served.policyRevision == served.policy.revision)
        }
    }

    @Test("an answer made without an id gets a new UUIDv7, later than the one made before it")
    func generatedID() throws {
        let first = try Self.served(.live, decisionID: nil)
        let second = try Self.served(.live, decisionID: nil)
        #expect([first.decisionID, second.decisionID].allSatisfy(DecisionIDs.isVersion7))
        #expect(first.decisionID < second.decisionID)
        #expect(first.jsonString(pretty: false).hasSuffix(#","decisionId":"\#(first.decisionID)"}"#))
    }
}
