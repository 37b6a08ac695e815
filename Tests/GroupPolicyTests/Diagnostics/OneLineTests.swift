import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

/// Every diagnostic and error is one line, whatever the decoded strings it quotes hold: a newline
/// would start a line a CI system reads as an annotation, ESC would drive the terminal.
@Suite("One line per diagnostic")
struct OneLineTests {
    @Test(
        "control characters are escaped as JSON escapes them; everything else is kept",
        arguments: [
            ("plain 'text' with \\ and \"quotes\"", "plain 'text' with \\ and \"quotes\""),
            ("a\nb\r\tc", "a\\nb\\r\\tc"),
            (
                "\u{1B}[2J\u{0}\u{7F}\u{85}\u{2028}\u{2029}\u{8}\u{C}",
                "\\u001b[2J\\u0000\\u007f\\u0085\\u2028\\u2029\\b\\f"
            ),
            ("é 日本 🙂", "é 日本 🙂"),
        ]
    )
    func escaping(text: String, expected: String) {
        #expect(text.escapingControlCharacters == expected)
    }

    @Test("a JSON key with a newline, a CI annotation and ESC stays on its diagnostic's line")
    func unknownKey() throws {
        let json = #"""
            { "format": "group-policy/v1", "id": "p", "capabilities": { "a": "A" }, "rules": [],
              "x\n::error file=forged.swift,line=1::owned\u001b[31m": 1 }
            """#
        let error = try #require(throws: GroupPolicyError.self) { try policy(json, fileName: "in\njected.json") }
        #expect(
            error.description
                == #"in\njected.json:2:3: error: ["x\u000a::error file=forged.swift,line=1::owned\u001b[31m"]: "#
                + #"unknown key 'x\n::error file=forged.swift,line=1::owned\u001b[31m'; "#
                + "allowed: format, id, description, capabilities, rules, workspaces, sandbox, invariants"
        )
        #expect(!error.description.contains("\n"))
    }

    @Test("a capability name with a newline stays on its diagnostic's line")
    func capabilityName() throws {
        let json = #"""
            { "format": "group-policy/v1", "id": "p", "capabilities": { "a": "A" },
              "rules": [ { "id": "r", "match": { "groupType": "ORGANIZATION" },
                           "capabilities": ["b\n::error::forged"] } ] }
            """#
        let error = try #require(throws: GroupPolicyError.self) { try policy(json) }
        #expect(error.diagnostics.count == 1)
        #expect(!error.description.contains("\n"))
        #expect(error.description.contains(#"b\n::error::forged"#))
    }
}
