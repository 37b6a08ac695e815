import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy
@testable import GroupPolicyTooling

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Random wide policies (many names per match, rules naming group ids, several documents,
/// invariants) load, check and diff within 10 s and 1 GB of growth, or are refused with a limit
/// error naming the dimension: the property behind the work limit of `check` and `diff`.
///
/// Sized for debug builds in CI: the whole suite takes a few seconds there with the machine
/// loaded (the same inputs take well under a second in release), a margin of three and more
/// against the bound.
@Suite(.cpuBound) struct StructuredInputPropertyTests {
    typealias Bounds = StructuredInputBoundTests

    /// Limit errors must say which limit: scenarios, role entries, groups, entitlement sets, work,
    /// changes, rules, cells.
    static let namedDimensions = [
        "over the budget of", "over the work limit of", "over the limit of",
    ]

    /// The work limit the property runs with: the shipped one in release builds, a hundredth of
    /// it in debug builds, which evaluate scenarios about twenty times slower (so that a diff at
    /// the limit takes about a second there, a margin of three and more on a loaded machine).
    static var workLimit: Int {
        #if DEBUG
        ScenarioWork.maximum / 100
        #else
        ScenarioWork.maximum
        #endif
    }

    @Test(arguments: 0..<8)
    func wideRandomPoliciesCheckAndDiffWithinTheBound(seed: UInt64) throws {
        try ScenarioWork.$limit.withValue(Self.workLimit) { try checkAndDiffWideRandomPolicies(seed: seed) }
    }

    private func checkAndDiffWideRandomPolicies(seed: UInt64) throws {
        var random = SeededGenerator(seed: 0x5EED_0000 + seed)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let documents = Int.random(in: 1...3, using: &random)
        var oldFiles: [String] = []
        var newFiles: [String] = []
        for index in 0..<documents {
            let old = Self.widePolicy(id: "w\(index)", scale: 1 + Int(seed % 4), using: &random)
            let new = Self.variant(of: old, using: &random)
            oldFiles.append(try directory.write("old/w\(index).json", old.json))
            newFiles.append(try directory.write("new/w\(index).json", new.json))
        }

        let (loaded, loadCost) = Bounds.measure { () -> (Policy, Policy)? in
            guard let old = try? Policy(contentsOfFiles: oldFiles), let new = try? Policy(contentsOfFiles: newFiles)
            else { return nil }
            return (old, new)
        }
        #expect(loadCost.seconds < Bounds.seconds)
        #expect(loadCost.peakGrowth < Bounds.bytes)
        let (old, new) = try #require(loaded, "seed \(seed): random wide policies load")

        let (results, checkCost) = Bounds.measure { old.checkInvariants() }
        #expect(checkCost.seconds < Bounds.seconds, "seed \(seed)")
        #expect(checkCost.peakGrowth < Bounds.bytes, "seed \(seed)")
        for result in results where result.status == .overBudget {
            let message = result.diagnostic?.message ?? ""
            #expect(Self.namedDimensions.contains { message.contains($0) }, "\(message)")
        }

        let (outcome, diffCost) = Bounds.measure { () -> Result<PolicyDiff, GroupPolicyError> in
            do throws(GroupPolicyError) { return .success(try PolicyDiff(from: old, to: new)) } catch {
                return .failure(error)
            }
        }
        #expect(diffCost.seconds < Bounds.seconds, "seed \(seed)")
        #expect(diffCost.peakGrowth < Bounds.bytes, "seed \(seed)")
        if case .failure(let error) = outcome {
            // The caller's budget is a code of its own (it can be raised); fixed limits are not.
            #expect(error.code == (error.message.contains("over the budget of") ? .overBudget : .limitExceeded))
            #expect(Self.namedDimensions.contains { error.message.contains($0) }, "\(error.message)")
        }
    }

    /// A diff of a policy with itself never changes anything, however wide the policy: the work
    /// limit refuses it or the enumeration finds no row.
    @Test(arguments: 0..<3)
    func aWidePolicyDiffedWithItselfHasNoRows(seed: UInt64) throws {
        var random = SeededGenerator(seed: 0xD1FF_0000 + seed)
        let document = Self.widePolicy(id: "w", scale: 1 + Int(seed), using: &random)
        let loaded = try policy(document.json)
        let (outcome, cost) = Bounds.measure {
            ScenarioWork.$limit.withValue(Self.workLimit) { try? PolicyDiff(from: loaded, to: loaded) }
        }
        #expect(cost.seconds < Bounds.seconds)
        if let diff = outcome { #expect(diff.rows.count == 0) }
    }

    /// The work estimate refuses at once, before evaluating: with a lowered limit a diff that
    /// would otherwise run is refused with the estimate and the limit in its message.
    @Test func aDiffOverTheWorkLimitIsRefusedWithTheLimit() throws {
        let loaded = try policy(StructuredInputBoundTests.groupIDRules(count: 200))
        let diff = try PolicyDiff(from: loaded, to: loaded)
        #expect(diff.scenarioCount == 3 * 201 + 3 * 202)
        let error = ScenarioWork.$limit.withValue(1000) {
            #expect(throws: GroupPolicyError.self) { try PolicyDiff(from: loaded, to: loaded) }
        }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.hasPrefix("the diff's 1209 scenarios would cost about ") == true)
        #expect(error?.message.hasSuffix(" rule checks, over the work limit of 1000") == true)
    }

    /// Invariants share the check's work limit: one within it holds, the next over what is left is
    /// reported over budget naming the work limit, never passed.
    @Test func invariantsShareTheWorkLimit() throws {
        let loaded = try policy(
            StructuredInputBoundTests.groupIDRules(count: 100).replacingFirst(
                #""invariants": ["#,
                with: #""invariants": [ { "id": "never-b-2", "never": { "capabilities": ["b"] } },"#
            )
        )
        let unlimited = loaded.checkInvariants()
        #expect(unlimited.map(\.status) == [.holds, .holds])
        let work = try #require(unlimited.first?.estimatedWork)
        let limited = ScenarioWork.$limit.withValue(work + work / 2) { loaded.checkInvariants() }
        #expect(limited.map(\.status) == [.holds, .overBudget])
        #expect(limited.last?.workLimit == work / 2)
        #expect(limited.last?.diagnostic?.message.contains("rule checks, over the work limit of") == true)
    }

    /// A diff whose every scenario changes thousands of capabilities stops at the change limit
    /// instead of holding them all (it took gigabytes).
    @Test func aDiffOverTheChangeLimitStops() throws {
        let capabilities = (0..<100).map { "c\($0)" }
        let products = (0..<10).map { "\"p\($0)\"" }.joined(separator: ",")
        let list = capabilities.map { "\"\($0)\"" }.joined(separator: ",")
        let old = try policy(
            capabilities: capabilities,
            rules: #"[{"id":"all","match":{"productId":[\#(products)],"role":"*"},"capabilities":[\#(list)]}]"#
        )
        let new = try policy(capabilities: capabilities, rules: "[]")
        let (error, cost) = Bounds.measure {
            PolicyDiffer.$changeLimit.withValue(5_000) {
                #expect(throws: GroupPolicyError.self) { try PolicyDiff(from: old, to: new) }
            }
        }
        #expect(cost.seconds < Bounds.seconds)
        #expect(
            error?.message
                == "the diff finds more than 5000 minimal changes (scenario and capability), over the limit of 5000"
        )
        // Within the limit the same change is one merged row per capability and product.
        let diff = try PolicyDiff(from: old, to: new)
        #expect(diff.rows.count == 100 * 10)
    }

    /// Many group types and ids are counted, not built: an invariant over 3,000 x 3,000 frames is
    /// over budget at once (building them took seconds and gigabytes).
    @Test func manyFramesAreCountedNotBuilt() throws {
        let types = (0..<3000).map { #"{"id":"t\#($0)","match":{"groupType":"T\#($0)"},"capabilities":["a"]}"# }
        let ids = (0..<3000).map { #"{"id":"g\#($0)","match":{"groupId":"g\#($0)"},"capabilities":["a"]}"# }
        let loaded = try policy(
            capabilities: ["a", "b"],
            rules: "[" + (types + ids).joined(separator: ",") + "]",
            extra: #""invariants": [ { "id": "never-b", "never": { "capabilities": ["b"] } } ]"#
        )
        let (results, cost) = Bounds.measure { loaded.checkInvariants() }
        #expect(cost.seconds < Bounds.seconds)
        #expect(cost.peakGrowth < Bounds.bytes)
        #expect(results.map(\.status) == [.overBudget])
        #expect(results.first?.scenarioCount == 3003 * 3001 + 3003 * 3002)
        let error = #expect(throws: GroupPolicyError.self) { try PolicyDiff(from: loaded, to: loaded) }
        #expect(error?.code == .overBudget)
        #expect(
            error?.message
                == "the diff's scenario space has 18024006 groups (group types x group ids x environments), "
                + "over the budget of 10000000 scenarios"
        )
    }

    /// Deny rules naming thousands of products are compared with grants through sets: loading
    /// took seconds per pair of long lists (quadratic in their lengths).
    @Test func longListsInDenyAndGrantRulesLoadQuickly() throws {
        let products = (0..<5000).map { "\"p\($0)\"" }.joined(separator: ",")
        let rules = (0..<6).map { index in
            #"{"id":"r\#(index)",\#(index % 2 == 0 ? "" : #""effect":"deny","#)"#
                + #""match":{"groupId":"*","productId":[\#(products)],"role":"*"},"capabilities":["a"]}"#
        }
        let (loaded, cost) = try Bounds.measure {
            try policy(capabilities: ["a"], rules: "[" + rules.joined(separator: ",") + "]")
        }
        #expect(cost.seconds < Bounds.seconds)
        #expect(loaded.warnings.count == 3)
    }

    /// Explaining lists every rule naming the capability in every group: 2,000 such rules in 1,000
    /// groups are refused at once (the same at the limits took minutes and gigabytes), and one
    /// group of them is explained.
    @Test func explainingManyRulesInManyGroupsIsRefusedAtOnce() throws {
        let loaded = try policy(StructuredInputBoundTests.groupIDRules(count: 2000))
        let groups = (0..<1000).map { #"{"groupId":"x\#($0)","groupType":"ORGANIZATION","roles":[]}"# }
        let many = try response(#"{"groups":["# + groups.joined(separator: ",") + "]}")
        let (error, cost) = Bounds.measure {
            #expect(throws: GroupPolicyError.self) { try loaded.explain("a", for: many) }
        }
        #expect(cost.seconds < Bounds.seconds)
        #expect(error?.code == .limitExceeded)
        #expect(
            error?.message
                == "explaining 'a' would weigh 2000 rules naming it in each of 1000 groups, over the limit of "
                + "1000000 rule-group pairs; explain one group"
        )
        // The message names no option of a tool: the error names the parameter, the CLI its flag.
        #expect(error?.narrowingParameter == "group")
        let one = try loaded.explain("a", for: many, group: "x7")
        #expect(one.groups.count == 1)
    }

    /// Long lists in many groups are refused at once, naming the limit; one group is explained.
    ///
    /// Each near miss lists its rule's values: 50 rules naming 2,000 products each, in 400 groups,
    /// are only 20,000 rule-group pairs but would list 600 MB of names (the same at the limits
    /// grew past 4 GB and crashed).
    @Test func explainingRulesWithLongListsInManyGroupsIsRefusedAtOnce() throws {
        let products = (0..<2000).map { "\"product.\($0)\"" }.joined(separator: ",")
        let rules = (0..<50).map {
            #"{"id":"r\#($0)","match":{"productId":[\#(products)],"role":"ADMIN"},"capabilities":["a"]}"#
        }
        let loaded = try policy(capabilities: ["a"], rules: "[" + rules.joined(separator: ",") + "]")
        let groups = (0..<400).map {
            #"{"groupId":"x\#($0)","groupType":"ORGANIZATION","roles":[{"productId":"product.\#($0)","role":"NONE"}]}"#
        }
        let many = try response(#"{"groups":["# + groups.joined(separator: ",") + "]}")
        let (error, cost) = Bounds.measure {
            #expect(throws: GroupPolicyError.self) { try loaded.explain("a", for: many) }
        }
        #expect(cost.seconds < Bounds.seconds)
        #expect(error?.code == .limitExceeded)
        #expect(
            error?.message
                == "explaining 'a' would list 619050500 bytes of rule values and role entries (50 rules naming it, "
                + "400 groups), over the limit of 33554432 bytes; explain one group"
        )
        #expect(error?.narrowingParameter == "group")
        let one = try loaded.explain("a", for: many, group: "x7")
        #expect(one.groups.map(\.nearMisses.count) == [50])
    }

    /// A group of 5,000 role entries against 20 rules naming 5,000 products each: every entry was
    /// compared with every listed product, in each rule and again in the text (half a billion
    /// comparisons, minutes); now each entry is looked up once per rule.
    @Test func explainingAGroupOfManyEntriesAgainstLongListsIsQuick() throws {
        let products = (0..<5000).map { "\"product.\($0)\"" }.joined(separator: ",")
        let rules = (0..<20).map {
            #"{"id":"r\#($0)","match":{"productId":[\#(products)],"role":"ADMIN"},"capabilities":["a"]}"#
        }
        let loaded = try policy(capabilities: ["a"], rules: "[" + rules.joined(separator: ",") + "]")
        let entries = (0..<5000).map { #"{"productId":"product.\#($0 * 2)","role":"NONE"}"# }
        let one = try response(
            #"{"groups":[{"groupId":"g","groupType":"ORGANIZATION","roles":["# + entries.joined(separator: ",") + "]}]}"
        )
        let (text, cost) = try Bounds.measure { try loaded.explain("a", for: one).text }
        #expect(cost.seconds < Bounds.seconds)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 21)
        #expect(lines.first == "capability a: granted in 0 of 1 group")
        // Half the entries name a listed product (the even ones below 5,000), each with its role.
        #expect(lines.last?.hasPrefix("  or rule 'r19' needs role ADMIN for product.0, product.1, ") == true)
        #expect(
            lines.last?.hasSuffix(" or product.4999; this group has NONE for product.0, NONE for product.2, ") == false
        )
        #expect(lines.last?.hasSuffix("NONE for product.4996, NONE for product.4998") == true)
        #expect(lines.last?.components(separatedBy: "NONE for ").count == 2501)
    }

    // MARK: Inputs

    struct Document {
        var id: String
        var capabilities: [String]
        var rules: [String]
        var invariants: [String]

        var json: String {
            let declarations = capabilities.map { "\"\($0)\": \"\($0)\"" }.joined(separator: ", ")
            return """
                { "format": "group-policy/v1", "id": "\(id)", "capabilities": { \(declarations) },
                  "rules": [\(rules.joined(separator: ",\n"))],
                  "invariants": [\(invariants.joined(separator: ",\n"))] }
                """
        }
    }

    static func names(_ prefix: String, _ universe: Int, upTo count: Int, using random: inout SeededGenerator) -> String
    {
        let picked = Set(
            (0..<Int.random(in: 1...count, using: &random)).map { _ in Int.random(in: 0..<universe, using: &random) }
        )
        return "[" + picked.sorted().map { "\"\(prefix)\($0)\"" }.joined(separator: ",") + "]"
    }

    /// Up to 120 rules, each naming up to 40 products, roles, types or group ids, some requiring
    /// entitlements, some denying; a few invariants, role-level and group-level.
    static func widePolicy(id: String, scale: Int, using random: inout SeededGenerator) -> Document {
        let capabilities = (0..<Int.random(in: 2...70, using: &random)).map { "c\($0)" }
        var rules: [String] = []
        for index in 0..<Int.random(in: 1...(20 * scale), using: &random) {
            var match: [String] = []
            let shape = Double.random(in: 0..<1, using: &random)
            if shape < 0.35 { match.append(#""groupId": \#(names("g", 10 * scale, upTo: 4 * scale, using: &random))"#) }
            if shape > 0.25 {
                match.append(#""productId": \#(names("p", 10 * scale, upTo: 3 * scale, using: &random))"#)
                if Bool.random(using: &random) {
                    match.append(#""role": \#(names("R", 2 + scale, upTo: 2, using: &random))"#)
                }
            }
            if Double.random(in: 0..<1, using: &random) < 0.3 {
                match.append(#""groupType": \#(names("T", 2 + scale, upTo: 2, using: &random))"#)
            }
            let granted = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                "\"\(capabilities.randomElement(using: &random) ?? "c0")\""
            }
            var rule =
                #"{"id":"r\#(index)","match":{\#(match.joined(separator: ","))},"capabilities":[\#(granted.joined(separator: ","))]"#
            if Double.random(in: 0..<1, using: &random) < 0.25 { rule += #","effect":"deny""# }
            if Double.random(in: 0..<1, using: &random) < 0.25 {
                rule += #","requires":{"entitlements":["e\#(Int.random(in: 0..<6, using: &random))"]}"#
            }
            rules.append(rule + "}")
        }
        var invariants: [String] = []
        for index in 0..<Int.random(in: 0...3, using: &random) {
            let match =
                index % 2 == 0
                ? #""match": {"productId": \#(names("p", 10 * scale, upTo: 2 * scale, using: &random))}, "#
                : #""match": {"groupType": "ORGANIZATION"}, "#
            let quantifier = index % 3 == 2 ? "always" : "never"
            let listed = "\"\(capabilities.randomElement(using: &random) ?? "c0")\""
            invariants.append(#"{"id":"i\#(index)","\#(quantifier)":{\#(match)"capabilities":[\#(listed)]}}"#)
        }
        return Document(id: id, capabilities: capabilities, rules: rules, invariants: invariants)
    }

    /// The same document with a few rules dropped or duplicated, and perhaps a capability more.
    static func variant(of document: Document, using random: inout SeededGenerator) -> Document {
        var copy = document
        for _ in 0..<Int.random(in: 1...5, using: &random) where copy.rules.count > 1 {
            copy.rules.remove(at: Int.random(in: 0..<copy.rules.count, using: &random))
        }
        if Bool.random(using: &random) { copy.capabilities.append("extra") }
        return copy
    }
}

/// A directory under the system's temporary directory, for tests that need real files.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path =
            FileManager.default.temporaryDirectory.path + "/bounds-"
            + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Removes the directory and everything in it.
    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Writes `text` at `relativePath` and returns the file's path.
    func write(_ relativePath: String, _ text: String) throws -> String {
        let file = path + "/" + relativePath
        let directory = String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)])
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }
}
