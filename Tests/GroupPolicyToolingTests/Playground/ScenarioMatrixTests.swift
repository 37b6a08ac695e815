import GroupPolicy
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicyTooling

/// The scenario matrix: every single-group scenario of the space against every capability, and the
/// cells an edit changes, worked out by hand for small policies.
@Suite struct ScenarioMatrixTests {
    /// Grants `a` to the administrators of `p1` in `ENTERPRISE` groups; `b` is declared, never granted.
    static let tiny = """
        { "format": "group-policy/v1", "id": "tiny", "capabilities": { "a": "a", "b": "b" },
          "rules": [ { "id": "r", "capabilities": ["a"],
                       "match": { "groupType": "ENTERPRISE", "productId": "p1", "role": "ADMIN" } } ] }
        """

    /// Each row as `type product role: granted / changed`.
    static func lines(_ matrix: ScenarioMatrix) -> [String] {
        matrix.rows.map { row in
            let entry = row.entry.map { "\($0.productID) \($0.role.rawValue)" } ?? "-"
            return "\(row.groupType) \(entry): \(row.capabilities.joined(separator: ",")) / "
                + row.changed.joined(separator: ",")
        }
    }

    /// Four group types (the two known, the named one, the unnamed one), each without an entry and
    /// with each of the 6 entries (2 products × 3 roles), but `CONSUMER` only without: 22 rows, and
    /// only the `ENTERPRISE` administrator of `p1` holds `a`.
    @Test func everyScenarioOfATinyPolicyHasItsRow() throws {
        let matrix = try ScenarioMatrix(policy: try policy(Self.tiny), context: production)
        #expect(matrix.capabilities == ["a", "b"])
        #expect(matrix.rows.count == 22)
        #expect(matrix.rows.filter { !$0.capabilities.isEmpty }.map(\.capabilities) == [["a"]])
        #expect(
            Self.lines(matrix).filter { $0.hasPrefix("ENTERPRISE") } == [
                "ENTERPRISE -:  / ",
                "ENTERPRISE p1 ADMIN: a / ",
                "ENTERPRISE p1 NONE:  / ",
                "ENTERPRISE p1 UNNAMED_ROLE:  / ",
                "ENTERPRISE unnamed.product ADMIN:  / ",
                "ENTERPRISE unnamed.product NONE:  / ",
                "ENTERPRISE unnamed.product UNNAMED_ROLE:  / ",
            ]
        )
        #expect(Self.lines(matrix).filter { $0.hasPrefix("CONSUMER") } == ["CONSUMER -:  / "])
    }

    /// Widening the rule to every role changes two cells, both gained; narrowing it back marks the
    /// same two, both lost.
    @Test func anEditMarksTheCellsItChanges() throws {
        let saved = try policy(Self.tiny)
        let edited = try policy(Self.tiny.replacingOccurrences(of: "\"role\": \"ADMIN\"", with: "\"role\": \"*\""))
        let widened = try ScenarioMatrix(policy: edited, savedPolicy: saved, context: production)
        #expect(
            Self.lines(widened).filter { !$0.hasSuffix("/ ") } == [
                "ENTERPRISE p1 NONE: a / a",
                "ENTERPRISE p1 UNNAMED_ROLE: a / a",
            ]
        )
        let narrowed = try ScenarioMatrix(policy: saved, savedPolicy: edited, context: production)
        #expect(
            Self.lines(narrowed).filter { !$0.hasSuffix("/ ") } == [
                "ENTERPRISE p1 NONE:  / a",
                "ENTERPRISE p1 UNNAMED_ROLE:  / a",
            ]
        )
    }

    /// A capability only one version declares is a column, not granted by the other.
    @Test func aCapabilityOneVersionDropsIsStillAColumn() throws {
        let saved = try policy(Self.tiny)
        let edited = try policy(
            Self.tiny.replacingOccurrences(of: "\"a\": \"a\", ", with: "").replacingOccurrences(
                of: "[\"a\"]",
                with: "[\"b\"]"
            )
        )
        let matrix = try ScenarioMatrix(policy: edited, savedPolicy: saved, context: production)
        #expect(matrix.capabilities == ["a", "b"])
        #expect(Self.lines(matrix).filter { !$0.hasSuffix("/ ") } == ["ENTERPRISE p1 ADMIN: b / a,b"])
    }

    /// The context is every scenario's: the bundled family policy denies the badge in Sandbox.
    @Test func theContextIsEveryScenarios() throws {
        let family = try Policy(contentsOfFile: repositoryFile("Policies/family-sharing.json"))
        let production = try ScenarioMatrix(policy: family, context: production)
        let sandbox = try ScenarioMatrix(policy: family, context: sandbox)
        #expect(
            Self.lines(production).filter { $0.hasPrefix("CONSUMER") } == [
                "CONSUMER -: family.member-badge,family.shared-lists,family.space / "
            ]
        )
        #expect(
            Self.lines(sandbox).filter { $0.hasPrefix("CONSUMER") } == [
                "CONSUMER -: family.shared-lists,family.space / "
            ]
        )
        let entitled = try ScenarioMatrix(
            policy: family,
            context: EvaluationContext(environment: .production, entitlements: ["com.example.recipes.premium"])
        )
        #expect(entitled.entitlements == ["com.example.recipes.premium"])
        #expect(
            Self.lines(entitled).filter { $0.hasPrefix("CONSUMER") } == [
                "CONSUMER -: family.member-badge,family.premium-recipes,family.shared-lists,family.space / "
            ]
        )
    }

    /// A space of more rows than the matrix shows is refused with the count: 1,701 products (with
    /// the unnamed one) × 3 roles are 5,103 entries, so `ORGANIZATION` and the unnamed type have
    /// 5,104 rows each and `CONSUMER` one, 10,209 in all.
    @Test func aSpaceOverTheRowLimitIsRefused() throws {
        let products = (1...1700).map { "\"p\($0)\"" }.joined(separator: ", ")
        let large = try policy(
            capabilities: ["a"],
            rules: "[ { \"id\": \"r\", \"capabilities\": [\"a\"], \"match\": { \"productId\": [\(products)] } } ]"
        )
        #expect {
            try ScenarioMatrix(policy: large, context: production)
        } throws: { error in
            let error = error as? GroupPolicyError
            return error?.code == .overBudget
                && error?.message == "the scenario matrix has 10209 rows, over the limit of 10000"
        }
    }

    /// The JSON the playground draws: every row's scenario and cells.
    @Test func theJSONHoldsEveryRow() throws {
        let saved = try policy(Self.tiny)
        let edited = try policy(Self.tiny.replacingOccurrences(of: "\"role\": \"ADMIN\"", with: "\"role\": \"NONE\""))
        let json = try ScenarioMatrix(policy: edited, savedPolicy: saved, context: production).jsonString()
        #expect(
            json.hasPrefix(
                #"{"environment":"Production","entitlements":[],"capabilities":["a","b"],"rows":["#
                    + #"{"groupId":"unnamed-group","groupType":"ORGANIZATION","productId":null,"role":null,"#
                    + #""capabilities":[],"changed":[]},"#
            )
        )
        #expect(
            json.contains(
                #"{"groupId":"unnamed-group","groupType":"ENTERPRISE","productId":"p1","role":"ADMIN","#
                    + #""capabilities":[],"changed":["a"]},"#
                    + #"{"groupId":"unnamed-group","groupType":"ENTERPRISE","productId":"p1","role":"NONE","#
                    + #""capabilities":["a"],"changed":["a"]}"#
            )
        )
    }
}

/// The matrix of a wide policy is bounded in cells and bytes, not only in rows: 10,000
/// capabilities, one rule granting them all and a rule per product, 800 and 1,600 products, took
/// 11 and 30 s, 1.5 and 3.5 GB, and answered 371 and 742 MB in a release build, listing every
/// granted cell; now every row is evaluated and a window of the cells is listed, the changed ones
/// first.
@Suite(.cpuBound) struct WideScenarioMatrixTests {
    /// `c0` … `c9999`, rule `all` granting every one to every group, and `product-i` granting
    /// `c<i>` to any role of `com.example.product<i>`; edited, `all` no longer grants `c0`.
    static func wide(products: Int) -> (saved: String, edited: String) {
        let names = (0..<10_000).map { "\"c\($0)\"" }
        let capabilities = names.map { "\($0): \"C\"" }.joined(separator: ",")
        let productRules = (0..<products).map { index in
            #"{"id":"product-\#(index)","capabilities":["c\#(index)"],"#
                + #""match":{"productId":"com.example.product\#(index)","role":"*"}}"#
        }
        func policy(all: ArraySlice<String>) -> String {
            #"{"format":"group-policy/v1","id":"wide","capabilities":{\#(capabilities)},"#
                + #""rules":[{"id":"all","capabilities":[\#(all.joined(separator: ","))]},"#
                + productRules.joined(separator: ",") + "]}"
        }
        return (policy(all: names[...]), policy(all: names.dropFirst()))
    }

    /// Every row is evaluated (1 + 801 × 3 in `ORGANIZATION` and the unnamed type, 1 in
    /// `CONSUMER`), every changed cell counted (`c0` is lost in every row but the six holding
    /// product 0), and 100 columns × 1,000 rows listed: `c0` first, the changed rows first.
    @Test(arguments: [(800, 4_809), (1_600, 9_609)])
    func theWidePolicyIsAnsweredWithinTheBounds(_ products: Int, _ rows: Int) throws {
        let (savedText, editedText) = Self.wide(products: products)
        let saved = try policy(savedText)
        let edited = try policy(editedText)
        let (matrix, cost) = try StructuredInputBoundTests.measure {
            try ScenarioMatrix(policy: edited, savedPolicy: saved, context: production)
        }
        #expect(cost.seconds < StructuredInputBoundTests.seconds)
        #expect(cost.peakGrowth < StructuredInputBoundTests.bytes)
        #expect(matrix.rowCount == rows)
        #expect(matrix.capabilityCount == 10_000)
        #expect(matrix.changedRowCount == rows - 6)
        #expect(matrix.changedCapabilityCount == 1)
        #expect(matrix.changedCellCount == rows - 6)
        #expect(matrix.isOrderedByChange)
        #expect(!matrix.isComplete)
        #expect(matrix.capabilities.count == ScenarioMatrix.windowColumns)
        #expect(matrix.capabilities.prefix(4) == ["c0", "c1", "c10", "c100"])
        #expect(matrix.rows.count == ScenarioMatrix.maximumCells / ScenarioMatrix.windowColumns)
        let first = try #require(matrix.rows.first)
        #expect(first.groupType == "ORGANIZATION" && first.entry == nil)
        #expect(first.capabilities.count == 99 && first.changed == ["c0"])
        // The changed rows come first: the first 1,000 rows all lost `c0`.
        #expect(matrix.rows.allSatisfy { $0.changed == ["c0"] })
        let json = matrix.jsonString()
        #expect(json.utf8.count <= ScenarioMatrix.maximumBytes)
        #expect(
            json.hasSuffix(
                #""rowCount":\#(rows),"capabilityCount":10000,"changedRows":\#(rows - 6),"#
                    + #""changedCapabilities":1,"changedCells":\#(rows - 6),"orderedByChange":true,"firstRow":0,"#
                    + #""firstColumn":0,"complete":false}"#
            )
        )
    }

    /// A window further on: from row 4,803 (the first unchanged row, product 0's administrator in
    /// an `ORGANIZATION` group) and column 1.
    @Test func aWindowStartsWhereItIsAsked() throws {
        let (savedText, editedText) = Self.wide(products: 800)
        let matrix = try ScenarioMatrix(
            policy: try policy(editedText),
            savedPolicy: try policy(savedText),
            context: production,
            window: ScenarioMatrix.Window(firstRow: 4_803, firstColumn: 1)
        )
        #expect(matrix.window == ScenarioMatrix.Window(firstRow: 4_803, firstColumn: 1))
        #expect(matrix.rows.count == 6)
        #expect(
            matrix.rows.map { "\($0.groupType) \($0.entry?.productID ?? "-") \($0.entry?.role.rawValue ?? "-")" } == [
                "ORGANIZATION com.example.product0 ADMIN", "ORGANIZATION com.example.product0 NONE",
                "ORGANIZATION com.example.product0 UNNAMED_ROLE", "UNNAMED_TYPE com.example.product0 ADMIN",
                "UNNAMED_TYPE com.example.product0 NONE", "UNNAMED_TYPE com.example.product0 UNNAMED_ROLE",
            ]
        )
        #expect(matrix.capabilities.first == "c1")
        #expect(matrix.rows.allSatisfy { $0.changed.isEmpty && $0.capabilities.count == 100 })
    }

    /// A capability renamed by the edit (`c9999` to `a`) moves every column: the catalogs differ,
    /// and the matrix compares through the columns, within the bounds.
    @Test func aRenamedCapabilityIsComparedThroughTheColumns() throws {
        let (savedText, _) = Self.wide(products: 1_600)
        let editedText = savedText.replacingOccurrences(of: #""c9999": "C""#, with: #""a": "A""#)
            .replacingOccurrences(of: #""c9999"]"#, with: #""a"]"#)
        let edited = try policy(editedText)
        let saved = try policy(savedText)
        let (matrix, cost) = try StructuredInputBoundTests.measure {
            try ScenarioMatrix(policy: edited, savedPolicy: saved, context: production)
        }
        #expect(cost.seconds < StructuredInputBoundTests.seconds)
        #expect(matrix.capabilityCount == 10_001)
        #expect(matrix.changedRowCount == 9_609)
        #expect(matrix.changedCellCount == 2 * 9_609)
        #expect(matrix.capabilities.prefix(3) == ["a", "c9999", "c0"])
        #expect(matrix.rows.first?.changed == ["a", "c9999"])
    }

    /// A matrix whose rows would cost more rule checks than the work limit is refused at once.
    @Test func aMatrixOverTheWorkLimitIsRefused() throws {
        let (savedText, _) = Self.wide(products: 800)
        let saved = try policy(savedText)
        #expect {
            try ScenarioWork.$limit.withValue(1_000_000) {
                try ScenarioMatrix(policy: saved, context: production)
            }
        } throws: { error in
            (error as? GroupPolicyError)?.code == .limitExceeded
                && (error as? GroupPolicyError)?.message.hasPrefix("the scenario matrix's 4809 rows would cost about ")
                    == true
        }
    }
}

/// Laying a version's bits out as the matrix's columns, a run of bits at a time, puts each bit in
/// its column: against bit-by-bit placement, for random catalogs of up to 300 capabilities among
/// up to 400 columns.
@Suite struct ColumnLayoutTests {
    @Test(arguments: 0..<40)
    func everyBitLandsInItsColumn(_ seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed) &* 7919 &+ 11)
        let columnCount = Int.random(in: 1...400, using: &random)
        let columns = (0..<columnCount).filter { _ in Bool.random(using: &random) }
        let bitCount = columns.count
        var source = [UInt64](repeating: 0, count: max(1, (bitCount + 63) / 64))
        var expected = [UInt64](repeating: 0, count: (columnCount + 63) / 64)
        for bit in 0..<bitCount where Bool.random(using: &random) {
            source[bit >> 6] |= 1 << UInt64(bit & 63)
            expected[columns[bit] >> 6] |= 1 << UInt64(columns[bit] & 63)
        }
        var laid = [UInt64](repeating: .max, count: expected.count)
        ColumnLayout(columnOfBit: columns).lay(source.count == 1 ? .small(source[0]) : .large(source), into: &laid)
        #expect(laid == expected)
    }
}
