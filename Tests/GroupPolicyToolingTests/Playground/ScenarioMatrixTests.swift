import GroupPolicy
import GroupPolicyTestSupport
import GroupPolicyTooling
import Testing

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
