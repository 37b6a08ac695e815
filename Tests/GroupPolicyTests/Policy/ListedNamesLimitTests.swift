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

    /// Workspaces and invariants are bounded per policy, and per set together: every group is
    /// matched against every workspace (a decision holds up to groups × workspaces memberships),
    /// and `check` proves each invariant over its own space.
    @Test func workspacesAndInvariantsAreBounded() throws {
        #expect(PolicyLimits.default.maximumWorkspaces == 100)
        #expect(PolicyLimits.default.maximumInvariants == 1_000)
        let workspaces = (0..<3).map { #"{ "id": "w\#($0)" }"# }.joined(separator: ",")
        let invariants = (0..<3).map { #"{ "id": "i\#($0)", "never": { "capabilities": ["a"] } }"# }
            .joined(separator: ",")
        let json = """
            { "format": "group-policy/v1", "id": "bounded", "capabilities": { "a": "a" },
              "rules": [ { "id": "r", "capabilities": ["a"] } ],
              "workspaces": [\(workspaces)], "invariants": [\(invariants)] }
            """
        _ = try Policy(jsonBytes: Self.bytes(json), limits: PolicyLimits(maximumWorkspaces: 3, maximumInvariants: 3))
        #expect {
            try Policy(jsonBytes: Self.bytes(json), limits: PolicyLimits(maximumWorkspaces: 2, maximumInvariants: 2))
        } throws: { error in
            (error as? GroupPolicyError)?.diagnostics.map { "\($0.jsonPath): \($0.message)" } == [
                "workspaces: 3 workspaces is over the limit of 2", "invariants: 3 invariants is over the limit of 2",
            ]
        }
        let directory = try makeTemporaryDirectory("bounded-set")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for index in 0..<2 {
            let file = json.replacingOccurrences(of: "\"bounded\"", with: "\"b\(index)\"")
                .replacingOccurrences(of: "\"id\": \"w", with: "\"id\": \"w\(index)-")
            _ = FileManager.default.createFile(atPath: directory + "/p\(index).json", contents: Data(file.utf8))
        }
        #expect {
            try Policy(contentsOfDirectory: directory, limits: PolicyLimits(maximumWorkspaces: 5, maximumInvariants: 5))
        } throws: { error in
            (error as? GroupPolicyError)?.diagnostics.map(\.message) == [
                "3 workspaces, with the 3 of the policy set's earlier files, is over the limit of 5 per policy set",
                "3 invariants, with the 3 of the policy set's earlier files, is over the limit of 5 per policy set",
            ]
        }
    }

    /// A workspace's lists are compared byte for byte, as the rules' are: a precomposed `é` in the
    /// policy is not the decomposed one a response sends, and a long list is a table lookup.
    @Test func workspaceListsMatchExactBytes() throws {
        let products = (0..<1_000).map { "\"p\($0)\"" }.joined(separator: ",")
        let json = """
            { "format": "group-policy/v1", "id": "ws", "capabilities": { "a": "a" },
              "rules": [ { "id": "r", "capabilities": ["a"] } ],
              "workspaces": [ { "id": "exact", "match": { "productId": ["caf\u{e9}"] }, "adminRoles": ["ADMIN"] },
                              { "id": "long", "match": { "productId": [\(products)] } } ] }
            """
        let loaded = try Policy(jsonBytes: Self.bytes(json))
        func memberships(_ productID: String) throws -> [String] {
            let response = try GetCustomerGroupsResponse(
                jsonBytes: Self.bytes(
                    #"{"groups":[{"groupId":"g","groupType":"ORGANIZATION","roles":[{"productId":"\#(productID)","role":"ADMIN"}]}]}"#
                )
            )
            return loaded.evaluate(response).workspaces.map { "\($0.workspace.id) \($0.role)" }
        }
        #expect(try memberships("caf\u{e9}") == ["exact admin"])
        #expect(try memberships("cafe\u{301}") == [])
        let long = try memberships("p999")
        #expect(long == ["long admin"])  // adminRoles defaults to ADMIN
        #expect(try memberships("p1000") == [])
    }
}
