import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy
@testable import GroupPolicyTooling

/// The tools see two spellings of a name as two names, as the engine does.
///
/// "café" with a precomposed "é" (NFC) and "café" with "e" and a combining accent (NFD) are two
/// values to the engine, which compares bytes, and one to `String`'s `==`. A check that folds the
/// two proves an invariant that a request breaks, and a diff that folds them misses a change.
@Suite struct ExactNameTests {
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"

    static func utf8(_ text: String?) -> [UInt8]? { text.map { Array($0.utf8) } }

    /// `x` for one spelling, `y` for the other, in either order: "never x" does not hold, and the
    /// counterexample is the spelling that gets `x`, which `evaluate` confirms.
    @Test(arguments: [false, true])
    func anInvariantSeesBothSpellingsOfAGroupID(_ nfdFirst: Bool) throws {
        let rules = [
            #"{ "id": "rx", "match": { "groupId": "\#(Self.nfd)" }, "capabilities": ["x"] }"#,
            #"{ "id": "ry", "match": { "groupId": "\#(Self.nfc)" }, "capabilities": ["y"] }"#,
        ]
        let checked = try policy(
            capabilities: ["x", "y"],
            rules: "[ " + (nfdFirst ? rules : rules.reversed()).joined(separator: ", ") + " ]",
            extra: #""invariants": [ { "id": "never-x", "never": { "capabilities": ["x"] } } ]"#
        )
        let results = checked.checkInvariants()
        #expect(results.map(\.status) == [.violated])
        let counterexample = try #require(results.first?.counterexample)
        #expect(Self.utf8(counterexample.groupID) == Self.utf8(Self.nfd))
        #expect(checked.evaluate(counterexample.response, in: counterexample.context).capabilities.names == ["x"])
    }

    /// The same for a product: a role-level rule on each spelling.
    @Test func anInvariantSeesBothSpellingsOfAProduct() throws {
        let checked = try policy(
            capabilities: ["x", "y"],
            rules: """
                [ { "id": "ry", "match": { "productId": "\(Self.nfc)", "role": "ADMIN" }, "capabilities": ["y"] },
                  { "id": "rx", "match": { "productId": "\(Self.nfd)", "role": "ADMIN" }, "capabilities": ["x"] } ]
                """,
            extra: #""invariants": [ { "id": "never-x", "never": { "capabilities": ["x"] } } ]"#
        )
        let results = checked.checkInvariants()
        #expect(results.map(\.status) == [.violated])
        let counterexample = try #require(results.first?.counterexample)
        #expect(counterexample.roles.map { Array($0.productID.utf8) } == [Array(Self.nfd.utf8)])
        #expect(checked.evaluate(counterexample.response, in: counterexample.context).capabilities.names == ["x"])
    }

    /// Moving a grant from one spelling to the other is a removal and an addition, in every
    /// dimension that holds a name.
    @Test(arguments: ["groupId", "groupType", "productId", "role"])
    func aDiffBetweenSpellingsShowsBothChanges(_ key: String) throws {
        func version(_ spelling: String) throws -> Policy {
            let match =
                switch key {
                case "productId": #"{ "productId": "\#(spelling)", "role": "ADMIN" }"#
                case "role": #"{ "productId": "p", "role": "\#(spelling)" }"#
                default: #"{ "\#(key)": "\#(spelling)" }"#
                }
            return try policy(
                capabilities: ["x"],
                rules: #"[ { "id": "r", "match": \#(match), "capabilities": ["x"] } ]"#
            )
        }
        let old = try version(Self.nfc)
        let new = try version(Self.nfd)
        let diff = try PolicyDiff(from: old, to: new)
        func value(_ row: PolicyDiff.Row) -> String? {
            switch key {
            case "groupId": row.groupID
            case "groupType": row.groupType
            case "productId": row.roles.first?.productID
            default: row.roles.first?.role
            }
        }
        #expect(diff.rows.map(\.change) == [.added, .removed])
        #expect(diff.rows.map { Self.utf8(value($0)) } == [Self.utf8(Self.nfd), Self.utf8(Self.nfc)])
        for row in diff.rows {
            let before = old.evaluate(row.example.response, in: row.example.context).capabilities.contains("x")
            let after = new.evaluate(row.example.response, in: row.example.context).capabilities.contains("x")
            #expect((before, after) == (row.change == .added ? (false, true) : (true, false)))
        }
    }

    /// An entitlement: a grant that needs one spelling, then the other.
    @Test func aDiffBetweenSpellingsOfAnEntitlementShowsBothChanges() throws {
        func version(_ spelling: String) throws -> Policy {
            try policy(
                capabilities: ["x"],
                rules: #"[ { "id": "r", "requires": { "entitlements": ["\#(spelling)"] }, "capabilities": ["x"] } ]"#
            )
        }
        let diff = try PolicyDiff(from: version(Self.nfc), to: version(Self.nfd))
        #expect(diff.rows.map(\.change) == [.added, .removed])
        #expect(
            diff.rows.map { $0.entitlements.map { Array($0.utf8) } } == [
                [Array(Self.nfd.utf8)], [Array(Self.nfc.utf8)],
            ]
        )
    }

    /// A test expectation about a group looks the group up by its bytes.
    @Test func aGroupExpectationLooksTheGroupUpByItsBytes() throws {
        let policyPath = repositoryFile("Policies/team-workspace.json")
        let suite = try PolicyTestSuite(
            jsonBytes: bytes(
                """
                { "format": "group-policy-tests/v1", "policy": "\(policyPath)", "cases": [
                  { "name": "c", "response": { "groups": [ { "groupId": "\(Self.nfd)", "groupType": "CONSUMER" } ] },
                    "expect": { "groups": { "\(Self.nfd)": [], "\(Self.nfc)": [] } } } ] }
                """
            ),
            fileName: "t.tests.json"
        )
        let failures = try #require(suite.run().first).failures
        #expect(
            failures.map { Array($0.utf8) } == [
                Array(
                    #"groups["\#(Self.nfc)"]: expected [], but the response has no group '\#(Self.nfc)' (it has ["\#(Self.nfd)"])"#
                        .utf8
                )
            ]
        )
    }
}
