import Testing

@testable import GroupPolicyBasics

/// How a path prints: keys that are identifiers after a dot, indices and every other key in
/// brackets (quoted, with `"`, `\` and control characters escaped), the root as `$`.
@Suite struct JSONPathTests {
    @Test func theRootPrintsAsDollar() {
        #expect(JSONPath.root.description == "$")
        #expect(JSONPath(components: []) == .root)
        #expect(JSONPath.root.appending(contentsOf: .root) == .root)
    }

    @Test(
        arguments: [
            (
                JSONPath.root.appending("rules").appending(2).appending("match").appending("productId"),
                "rules[2].match.productId"
            ),
            (JSONPath.root.appending("capabilities").appending("workspace.view"), #"capabilities["workspace.view"]"#),
            (JSONPath.root.appending(0), "[0]"),
            (JSONPath.root.appending(0).appending(12).appending("id"), "[0][12].id"),
            (JSONPath.root.appending("a"), "a"),
            (JSONPath.root.appending("_private9").appending("B_2"), "_private9.B_2"),
            (JSONPath.root.appending("2fa"), #"["2fa"]"#),
            (JSONPath.root.appending(""), #"[""]"#),
            (JSONPath.root.appending("a-b").appending("c d"), #"["a-b"]["c d"]"#),
            (JSONPath.root.appending("x.y").appending("z").appending(-1), #"["x.y"].z[-1]"#),
            (JSONPath.root.appending("caf\u{E9}"), "[\"caf\u{E9}\"]"),
            (JSONPath.root.appending(#"say "hi" \o/"#), #"["say \"hi\" \\o/"]"#),
            (JSONPath.root.appending("a\nb\u{0}\u{1F}\u{7F}"), "[\"a\\u000ab\\u0000\\u001f\u{7F}\"]"),
        ]
    )
    func describes(path: JSONPath, description: String) {
        #expect(path.description == description)
    }

    @Test func appendingAnotherPathAddsItsSteps() {
        let rules = JSONPath.root.appending("rules")
        let relative = JSONPath(components: [.index(3), .key("match"), .key("group.type")])
        let joined = rules.appending(contentsOf: relative)
        #expect(joined.components == [.key("rules"), .index(3), .key("match"), .key("group.type")])
        #expect(joined.description == #"rules[3].match["group.type"]"#)
        #expect(joined == rules.appending(3).appending("match").appending("group.type"))
        #expect(rules.components == [.key("rules")])
        #expect(Set([joined, rules.appending(3).appending("match").appending("group.type"), rules]).count == 2)
    }
}
