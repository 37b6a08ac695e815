import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The bound on the names one policy lists (match values, capabilities, entitlements, environments,
/// admin roles, aliases), and the bound on diagnostics of one kind: what keeps a 32 MiB file of
/// five-byte names from costing gigabytes to load, check or diff.
@Suite struct ListedNamesLimitTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A policy of one rule listing `products` product ids, with aliases and an invariant.
    static func policy(products: Int, aliases: Int = 0) -> String {
        let names = (0..<products).map { "\"p\($0)\"" }.joined(separator: ",")
        let aliasMembers = (0..<aliases).map { "\"s\($0)\": \"p0\"" }.joined(separator: ",")
        return """
            { "format": "group-policy/v1", "id": "names", "capabilities": { "a": "a" },
              "rules": [ { "id": "r", "capabilities": ["a"], "match": { "productId": [\(names)] } } ],
              "sandbox": { "productAliases": { \(aliasMembers) } } }
            """
    }

    /// Exactly at the limit loads: one capability and nine product ids are ten names.
    @Test func aPolicyAtTheLimitLoads() throws {
        let policy = try Policy(
            jsonBytes: Self.bytes(Self.policy(products: 9)),
            limits: PolicyLimits(maximumListedNames: 10)
        )
        #expect(policy.compiled.documents[0].ruleCount == 1)
    }

    /// One name more is refused at the name that crosses the limit, naming the limit.
    @Test func oneNameOverTheLimitIsRefusedWhereItIs() {
        #expect {
            try Policy(
                jsonBytes: Self.bytes(Self.policy(products: 10)),
                fileName: "p.json",
                limits: PolicyLimits(maximumListedNames: 10)
            )
        } throws: { error in
            let error = error as? GroupPolicyError
            return error?.code == .invalidPolicy
                && error?.diagnostics.map(\.description) == [
                    "p.json:2:120: error: rules[0].match.productId[9]: more than 10 listed names in one policy "
                        + "(match values, capabilities, entitlements, admin roles and aliases together) is over the "
                        + "limit of 10"
                ]
        }
    }

    /// An alias is two names; the limit is reported at the alias that crosses it, and once.
    @Test func aliasesCountTwoNamesEach() throws {
        // 1 capability + 1 product + 4 aliases (8 names) = 10: loads.
        _ = try Policy(
            jsonBytes: Self.bytes(Self.policy(products: 1, aliases: 4)),
            limits: PolicyLimits(maximumListedNames: 10)
        )
        #expect {
            try Policy(
                jsonBytes: Self.bytes(Self.policy(products: 1, aliases: 5)),
                limits: PolicyLimits(maximumListedNames: 10)
            )
        } throws: { error in
            let diagnostics = (error as? GroupPolicyError)?.diagnostics ?? []
            return diagnostics.count == 1 && diagnostics[0].kind == .limitExceeded
                && diagnostics[0].jsonPath == "sandbox.productAliases.s4"
        }
    }

    /// The default is a million names.
    @Test func theDefaultIsAMillion() {
        #expect(PolicyLimits.default.maximumListedNames == 1_000_000)
    }

    /// A file with more than a hundred diagnostics of one kind lists a hundred, then one that
    /// counts the others and points at the first of them.
    @Test func aKindOfDiagnosticIsListedAHundredTimesThenCounted() throws {
        let roles = (0..<250).map { "\"R\($0)\"" }.joined(separator: ",")
        let json = """
            { "format": "group-policy/v1", "id": "roles", "capabilities": { "a": "a" },
              "rules": [ { "id": "r", "capabilities": ["a"], "match": { "role": [\(roles)] } } ] }
            """
        let policy = try Policy(jsonBytes: Self.bytes(json), fileName: "p.json")
        let warnings = policy.warnings
        #expect(warnings.count == 101)
        #expect(warnings.dropLast().allSatisfy { $0.kind == warnings[0].kind })
        #expect(warnings[99].jsonPath == "rules[0].match.role[99]")
        let summary = try #require(warnings.last)
        #expect(summary.kind == warnings[0].kind)
        #expect(summary.jsonPath == "rules[0].match.role[100]")
        #expect(
            summary.message
                == "150 more warnings of kind \(summary.kind.rawValue) from here on are not listed "
                + "(at most 100 of a kind per file)"
        )
    }

    /// Errors are bounded the same way: 300 undeclared capabilities are 100 errors and a count.
    @Test func errorsOfAKindAreBoundedToo() {
        let capabilities = (0..<300).map { "\"c\($0)\"" }.joined(separator: ",")
        let json = """
            { "format": "group-policy/v1", "id": "caps", "capabilities": { "a": "a" },
              "rules": [ { "id": "r", "capabilities": [\(capabilities)] } ] }
            """
        #expect {
            try Policy(jsonBytes: Self.bytes(json))
        } throws: { error in
            let errors = (error as? GroupPolicyError)?.diagnostics.filter { $0.severity == .error } ?? []
            return errors.count == 101 && errors.last?.message.hasPrefix("200 more errors of kind ") == true
        }
    }

    /// A directory of `count` files, each `policy(products: products)` with its own id.
    static func set(files count: Int, products: Int) throws -> String {
        let directory = try makeTemporaryDirectory("names-set")
        for index in 0..<count {
            let json = policy(products: products).replacingOccurrences(
                of: "\"id\": \"names\"",
                with: "\"id\": \"n\(index)\""
            )
            _ = FileManager.default.createFile(atPath: directory + "/p\(index).json", contents: Data(json.utf8))
        }
        return directory
    }

    /// A set is evaluated as one policy, so the limits bound its files together: two files of six
    /// names each are over a limit of ten, at the second file's crossing name; the third file is
    /// not read.
    @Test func theListedNamesOfASetCountTogether() throws {
        let directory = try Self.set(files: 3, products: 5)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try Policy(contentsOfFile: directory + "/p0.json", limits: PolicyLimits(maximumListedNames: 10))
        #expect {
            try Policy(contentsOfDirectory: directory, limits: PolicyLimits(maximumListedNames: 10))
        } throws: { error in
            let diagnostics = (error as? GroupPolicyError)?.diagnostics ?? []
            return diagnostics.count == 1
                && diagnostics[0].location?.file == directory + "/p1.json"
                && diagnostics[0].jsonPath == "rules[0].match.productId[3]"
                && diagnostics[0].message.hasPrefix("more than 10 listed names in one policy set (")
        }
    }

    /// Rules and bytes are bounded per set the same way.
    @Test func theRulesAndBytesOfASetCountTogether() throws {
        let directory = try Self.set(files: 3, products: 1)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect {
            try Policy(contentsOfDirectory: directory, limits: PolicyLimits(maximumRules: 2))
        } throws: { error in
            let diagnostics = (error as? GroupPolicyError)?.diagnostics ?? []
            return diagnostics.map(\.message) == [
                "1 rules, with the 2 of the policy set's earlier files, is over the limit of 2 per policy set"
            ]
        }
        let size = try #require(FileManager.default.attributesOfItem(atPath: directory + "/p0.json")[.size] as? Int)
        #expect {
            try Policy(contentsOfDirectory: directory, limits: PolicyLimits(maximumBytes: 2 * size + 1))
        } throws: { error in
            let diagnostics = (error as? GroupPolicyError)?.diagnostics ?? []
            return diagnostics.map(\.message) == [
                "\(directory)/p2.json: the policy set's files hold \(3 * size) bytes together, over the limit of "
                    + "\(2 * size + 1) bytes per policy set"
            ]
        }
    }
}
