import GroupPolicyBasics
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

/// The compiled document keeps its rules in compact tables, not the parsed document: what the tools
/// read back must be exactly what was parsed, and byte-different spellings must stay apart.
@Suite struct CompactRuleTests {
    static let shippedPolicies = ["Policies/team-workspace.json", "Policies/family-sharing.json"]

    /// Every field a tool can read of a rule, as one comparable string.
    static func describe(_ rule: RuleDefinition) -> String {
        let fields: [String] = [
            rule.id, rule.description ?? "-", rule.effect.rawValue, rule.capabilities.joined(separator: ","),
            "\(rule.match)", "\(rule.requires.environments.map { $0.map(\.rawValue).sorted() } ?? ["-"])",
            rule.requires.entitlements.joined(separator: ","), "\(rule.offset)", rule.path.description,
            rule.location?.description ?? "-",
        ]
        return fields.joined(separator: " | ")
    }

    @Test(arguments: shippedPolicies)
    func theRebuiltDocumentIsTheParsedOne(_ file: String) throws {
        let path = repositoryFile(file)
        let bytes = try readFile(path, limits: .default)
        let parsed = try Policy.parseDocument(bytes, fileName: path, limits: .default)
        let loaded = try Policy(contentsOfFile: path)
        let rebuilt = try #require(loaded.compiled.documents.first).document
        #expect(rebuilt.rules.map(Self.describe) == parsed.rules.map(Self.describe))
        #expect(rebuilt.id == parsed.id)
        #expect(rebuilt.fileName == parsed.fileName)
        #expect(rebuilt.workspaces.map(\.id) == parsed.workspaces.map(\.id))
        #expect(rebuilt.productAliases == parsed.productAliases)
        #expect(rebuilt.invariants.map(\.id) == parsed.invariants.map(\.id))
        #expect(rebuilt.warnings == parsed.warnings)
    }

    @Test func aSetQualifiesLabelsButRebuildsPlainIDs() throws {
        let paths = Self.shippedPolicies.map { repositoryFile($0) }
        let loaded = try Policy(contentsOfFiles: paths)
        let first = try #require(loaded.compiled.documents.first)
        let parsed = try Policy.parseDocument(
            try readFile(paths[0], limits: .default),
            fileName: paths[0],
            limits: .default
        )
        #expect(first.ruleLabels.first == "\(parsed.id)/\(parsed.rules[0].id)")
        #expect(first.document.rules.map(\.id) == parsed.rules.map(\.id))
    }

    /// "é" precomposed (U+00E9) and decomposed (e + U+0301) are equal as `String`s but are two
    /// product ids: interned apart, listed as written, and only the exact bytes match.
    @Test func canonicallyEquivalentSpellingsStayApart() throws {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let json = """
            { "format": "group-policy/v1", "id": "p", "capabilities": { "a": "A", "b": "B" },
              "rules": [
                { "id": "r1", "capabilities": ["a"], "match": { "productId": ["\(composed)", "\(composed)"] } },
                { "id": "r2", "capabilities": ["b"], "match": { "productId": "\(decomposed)" } } ] }
            """
        let loaded = try Policy(jsonBytes: Array(json.utf8))
        let rules = try #require(loaded.compiled.documents.first).document.rules
        #expect(
            rules.map { $0.match.productIDs?.values.map { Array($0.utf8) } } == [
                [Array(composed.utf8)], [Array(decomposed.utf8)],
            ]
        )
        let response = GetCustomerGroupsResponse(groups: [
            GroupEntry(groupID: "g", groupType: .organization, roles: [RoleEntry(productID: decomposed, role: .admin)])
        ])
        #expect(loaded.capabilities(for: response).names == ["b"])
        let explanation = try loaded.explain("a", for: response)
        #expect(explanation.groups.map(\.outcome) == [.notGranted])
        #expect(try loaded.explain("b", for: response).groups.map(\.outcome) == [.granted])
    }

    /// Warnings are kept compactly (a large policy can have one per rule) and read back exactly.
    @Test func warningsComeBackAsParsed() throws {
        let json = """
            { "format": "group-policy/v1", "id": "p", "capabilities": { "a": "A", "never": "N" },
              "rules": [
                { "id": "r1", "capabilities": ["a"], "match": { "role": "MEMBER" } },
                { "id": "r2", "capabilities": ["a"], "match": { "role": ["MEMBER", "OWNER"] } } ] }
            """
        let bytes = Array(json.utf8)
        for fileName in [nil, "dir/p.json"] {
            let parsed = PolicyParser.parse(bytes: bytes, fileName: fileName, limits: .default)
            let loaded = try Policy(jsonBytes: bytes, fileName: fileName)
            #expect(loaded.warnings == parsed.diagnostics)
            #expect(
                loaded.warnings.map(\.jsonPath) == [
                    "capabilities.never", "rules[0].match.role", "rules[1].match.role[0]", "rules[1].match.role[1]",
                ]
            )
            #expect(loaded.warnings.first?.location == SourcePosition(file: fileName, line: 1, column: 71))
        }
    }

    /// The interner numbers byte strings in first-seen order across growth, and tells apart
    /// spellings `String` calls equal.
    @Test func theInternerNumbersExactBytesInFirstSeenOrder() {
        var interner = ByteInterner()
        let names =
            (0..<5000).map { "product.\($0 * 7919 % 5000)-with-a-longer-tail" } + ["", "caf\u{E9}", "cafe\u{301}"]
        let numbers = names.map { interner.insert($0) }
        #expect(numbers == (0..<UInt32(names.count)).map { $0 })
        #expect(names.map { interner.insert($0) } == numbers)
        #expect(names.map { interner.index(of: $0) } == numbers.map { Optional($0) })
        #expect(interner.index(of: "product.5000-with-a-longer-tail") == nil)
        #expect(interner.count == names.count)
    }

    @Test func bytesCompareEightAtATimeAndTheTail() {
        let base = Array("0123456789abcdefXYZ".utf8)
        for length in 0...base.count {
            for position in 0..<length {
                var other = Array(base[0..<length])
                other[position] ^= 1
                base[0..<length].withUnsafeBufferPointer { left in
                    other.withUnsafeBufferPointer { right in #expect(!bytesEqual(left, right)) }
                }
            }
            base[0..<length].withUnsafeBufferPointer { left in
                Array(base[0..<length]).withUnsafeBufferPointer { right in #expect(bytesEqual(left, right)) }
            }
        }
        #expect("caf\u{E9}".isExactly("cafe\u{301}") == false)
        #expect("caf\u{E9}" == "cafe\u{301}")
    }

    /// Rules, workspaces and invariants are located in one pass; when the file lists workspaces
    /// before rules the offsets are out of order and must still land on the right lines.
    @Test func locationsHoldWhenWorkspacesComeBeforeRules() throws {
        let json = """
            { "format": "group-policy/v1", "id": "p", "capabilities": { "a": "A" },
              "workspaces": [
                { "id": "w", "match": { "groupType": "ORGANIZATION" }, "adminRoles": ["ADMIN"] } ],
              "rules": [
                { "id": "r1", "capabilities": ["a"] },
                { "id": "r2", "capabilities": ["a"] } ] }
            """
        let loaded = try Policy(jsonBytes: Array(json.utf8), fileName: "p.json")
        let document = try #require(loaded.compiled.documents.first).document
        #expect(document.rules.map { $0.location?.description } == ["p.json:5:5", "p.json:6:5"])
        #expect(document.workspaces.map { $0.location?.description } == ["p.json:3:5"])
    }
}
