import Foundation
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy
@testable import GroupPolicyTooling

/// A small test file cannot make `test` do work, or print output, that grows with cases times the
/// size of their decision: each distinct decision is read once, and each failure lists at most ten
/// names, saying how many it leaves out.
@Suite struct AmplifiedTestFileTests {
    /// A test file of `cases` (JSON objects) against a policy (JSON text), with a response file
    /// `r.json` beside it.
    static func suite(policy: String, response: String, cases: [String]) throws -> (PolicyTestSuite, String) {
        let directory = try makeTemporaryDirectory("amplified")
        try Data(policy.utf8).write(to: URL(fileURLWithPath: directory + "/p.json"))
        try Data(response.utf8).write(to: URL(fileURLWithPath: directory + "/r.json"))
        let testFile =
            #"{ "format": "group-policy-tests/v1", "policy": "p.json", "cases": ["#
            + cases.joined(separator: ",") + "] }"
        try Data(testFile.utf8).write(to: URL(fileURLWithPath: directory + "/p.tests.json"))
        return (try PolicyTestSuite(contentsOfFile: directory + "/p.tests.json"), directory)
    }

    static func policy(capabilities: [String], rules: [String], extra: String = "") -> String {
        let declared = capabilities.map { #""\#($0)":"\#($0)""# }.joined(separator: ",")
        return
            #"{"format":"group-policy/v1","id":"p","capabilities":{\#(declared)},"rules":[\#(rules.joined(separator: ","))]\#(extra)}"#
    }

    static func groups(_ count: Int) -> String {
        #"{"groups":["#
            + (0..<count).map { #"{"groupId":"g\#($0)","groupType":"ORGANIZATION"}"# }.joined(separator: ",")
            + "]}"
    }

    static func names(_ prefix: String, _ count: Int) -> [String] { (0..<count).map { "\(prefix)\($0)" } }

    static func quoted(_ names: [String]) -> String { names.map { "\"\($0)\"" }.joined(separator: ", ") }

    /// Coverage records each distinct decision once, not once per case that shares it (100
    /// group-level rules over a 10,000-group response shared by 1,000 cases re-recorded a million
    /// grants per case).
    @Test func coverageRecordsASharedDecisionOnce() throws {
        let rules = (0..<20).map {
            #"{"id":"r\#($0)","match":{"groupType":"ORGANIZATION"},"capabilities":["c\#($0)"]}"#
        }
        let cases = (0..<100).map { #"{"name":"case \#($0)","responseFile":"r.json","expect":{"includes":["c0"]}}"# }
        let (suite, directory) = try Self.suite(
            policy: Self.policy(capabilities: Self.names("c", 20), rules: rules),
            response: Self.groups(50),
            cases: cases
        )
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let work = ExpectationWork()
        let (results, coverage, merged) = ExpectationWork.$current.withValue(work) {
            let results = suite.run()
            var merged: [PolicyCoverage] = []
            PolicyCoverage.merge(results, of: suite, into: &merged)
            PolicyCoverage.merge(results, of: suite, into: &merged)
            return (results, suite.coverage(of: results), merged)
        }
        #expect(results.count == 100)
        #expect(results.allSatisfy { $0.passed })
        #expect(coverage.unexercisedRules.isEmpty)
        #expect(merged.map(\.unexercisedRules.count) == [0])
        // One decision, recorded once by `coverage(of:)` and once by each merge.
        #expect(work.recordedDecisions == 3)
    }

    /// `includes` of a name not granted lists the first ten granted names, and counts the rest;
    /// ten thousand such lines against 9,999 grants printed 900 MB.
    @Test func aMissingIncludeListsTenGrantedNames() throws {
        let granted = Self.names("c", 50)
        let cases = (0..<200).map {
            #"{"name":"case \#($0)","responseFile":"r.json","expect":{"includes":["missing"]}}"#
        }
        let (suite, directory) = try Self.suite(
            policy: Self.policy(
                capabilities: granted + ["missing"],
                rules: [#"{"id":"all","capabilities":[\#(Self.quoted(granted))]}"#]
            ),
            response: Self.groups(1),
            cases: cases
        )
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let work = ExpectationWork()
        let results = ExpectationWork.$current.withValue(work) { suite.run() }
        let shown = granted.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.prefix(10)
        #expect(
            results.first?.failures == [
                "includes: expected 'missing' to be granted, got [\(Self.quoted(Array(shown))), … and 40 more]"
            ]
        )
        #expect(results.allSatisfy { $0.failures == results.first?.failures })
        // The decision's 50 names are read once, for every case.
        #expect(work.names == 50)
    }

    /// A group the response does not have lists the first ten groups it has; 100,000 of them
    /// against 10,000 groups were killed at 3 GB.
    @Test func anAbsentGroupListsTenGroupsOfTheResponse() throws {
        let expected = (0..<300).map { #""x\#($0)":[]"# }.joined(separator: ",")
        let (suite, directory) = try Self.suite(
            policy: Self.policy(capabilities: ["a"], rules: [#"{"id":"r","capabilities":["a"]}"#]),
            response: Self.groups(500),
            cases: [#"{"name":"absent","responseFile":"r.json","expect":{"groups":{\#(expected)}}}"#]
        )
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let work = ExpectationWork()
        let failures = ExpectationWork.$current.withValue(work) { suite.run() }.first?.failures ?? []
        #expect(failures.count == 300)
        #expect(
            failures.first
                == #"groups["x0"]: expected [], but the response has no group 'x0' (it has [\#(Self.quoted(Self.names("g", 10))), … and 490 more])"#
        )
        #expect(work.names == 500)
    }

    /// Present groups holding many capabilities: each failure shows ten of them, and the work is
    /// each group's names once, not once per expectation naming it.
    @Test func aPresentGroupListsTenOfItsCapabilities() throws {
        let capabilities = Self.names("c", 300).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let expected = (0..<40).map { #""g\#($0 % 4)":["\#(capabilities[0])"]"# }
        // Duplicate keys are refused, so each group is named by a case of its own, ten times.
        let cases = expected.enumerated().map {
            #"{"name":"case \#($0.offset)","responseFile":"r.json","expect":{"groups":{\#($0.element)}}}"#
        }
        let (suite, directory) = try Self.suite(
            policy: Self.policy(
                capabilities: capabilities,
                rules: [#"{"id":"all","capabilities":[\#(Self.quoted(capabilities))]}"#]
            ),
            response: Self.groups(4),
            cases: cases
        )
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let work = ExpectationWork()
        let results = ExpectationWork.$current.withValue(work) { suite.run() }
        let shown = Self.quoted(Array(capabilities.prefix(10)))
        let unexpected = Self.quoted(Array(capabilities.dropFirst().prefix(10)))
        #expect(
            results.first?.failures == [
                #"groups["g0"]: expected ["\#(capabilities[0])"], got [\#(shown), … and 290 more] (unexpected [\#(unexpected), … and 289 more])"#
            ]
        )
        // The four groups' names once each (300 names), then at most 11 + 12 names per case.
        #expect(work.names <= 4 + 4 * 300 + 40 * 23)
    }

    /// `excludes` of a capability many rules grant names ten of them; 100,000 granting rules were
    /// de-duplicated pairwise (killed at 60 s).
    @Test func anExcludedCapabilityNamesTenOfItsRules() throws {
        let rules = (0..<60).map { #"{"id":"r\#($0)","match":{"groupType":"ORGANIZATION"},"capabilities":["a"]}"# }
        let (suite, directory) = try Self.suite(
            policy: Self.policy(capabilities: ["a"], rules: rules),
            response: Self.groups(2),
            cases: [#"{"name":"excluded","responseFile":"r.json","expect":{"excludes":["a"]}}"#]
        )
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let reasons = (0..<10).map { "'r\($0)' in group g0" }.joined(separator: ", ")
        #expect(
            suite.run().first?.failures == [
                "excludes: expected 'a' not to be granted, but it is (granted by \(reasons), … and 110 more)"
            ]
        )
    }

    /// `capabilities` lists are compared through sets, and each case reads only the names its
    /// failure shows: 300 cases of 5,000 names compared pairwise were killed at 60 s.
    @Test func exactCapabilityListsCostTheirOwnLength() throws {
        let expected = Self.names("e", 100)
        let granted = Self.names("g", 100)
        let cases = (0..<300).map {
            #"{"name":"case \#($0)","responseFile":"r.json","expect":{"capabilities":[\#(Self.quoted(expected))]}}"#
        }
        let (suite, directory) = try Self.suite(
            policy: Self.policy(
                capabilities: expected + granted,
                rules: [#"{"id":"all","capabilities":[\#(Self.quoted(granted))]}"#]
            ),
            response: Self.groups(1),
            cases: cases
        )
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let work = ExpectationWork()
        let results = ExpectationWork.$current.withValue(work) { suite.run() }
        let sortedExpected = expected.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let sortedGranted = granted.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let first = Self.quoted(Array(sortedExpected.prefix(10)))
        let got = Self.quoted(Array(sortedGranted.prefix(10)))
        #expect(
            results.first?.failures == [
                "capabilities: expected [\(first), … and 90 more], got [\(got), … and 90 more] "
                    + "(missing [\(first), … and 90 more]; unexpected [\(got), … and 90 more])"
            ]
        )
        // The 100 granted names once, then 11 per case for the unexpected ones it shows.
        #expect(work.names == 100 + 300 * 11)
    }

    /// `workspaces` against a decision of many memberships lists ten of them.
    @Test func unexpectedWorkspacesAreListedTen() throws {
        let (suite, directory) = try Self.suite(
            policy: Self.policy(
                capabilities: ["a"],
                rules: [#"{"id":"r","capabilities":["a"]}"#],
                extra: #","workspaces":[{"id":"w"}]"#
            ),
            response: Self.groups(30),
            cases: (0..<50).map { #"{"name":"case \#($0)","responseFile":"r.json","expect":{"workspaces":[]}}"# }
        )
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let work = ExpectationWork()
        let results = ExpectationWork.$current.withValue(work) { suite.run() }
        let listed = (0..<30).map { #"{"workspace": "w", "groupId": "g\#($0)", "role": "member"}"# }.sorted().prefix(10)
        #expect(
            results.first?.failures == [
                "workspaces: expected [], got [\(listed.joined(separator: ", ")), … and 20 more]"
            ]
        )
        #expect(work.names == 30)
    }

    /// The cut is said, and a list within the bounds prints whole.
    @Test func aListIsCutAfterTenNamesOrAKilobyte() {
        #expect(FailureList.text(["a", "b"]) == #"["a", "b"]"#)
        #expect(FailureList.text(Self.names("n", 11)) == "[\(Self.quoted(Self.names("n", 10))), … and 1 more]")
        let long = String(repeating: "x", count: 600)
        #expect(FailureList.text([long, long, "y"]) == #"["\#(long)", … and 2 more]"#)
        #expect(FailureList.text([String(repeating: "z", count: 2000)]) == "[… and 1 more]")
        #expect(FailureList.text(["a"], total: 5000) == #"["a", … and 4999 more]"#)
    }
}
