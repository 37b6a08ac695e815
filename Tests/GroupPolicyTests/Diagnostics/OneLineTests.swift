import GroupPolicyBasics
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
            // Bidirectional overrides, embeddings, isolates and marks would reorder the line.
            (
                "admin\u{202E}nimda\u{202A}\u{202B}\u{202C}\u{202D}\u{2066}\u{2067}\u{2068}\u{2069}\u{200E}\u{200F}\u{61C}",
                "admin\\u202enimda\\u202a\\u202b\\u202c\\u202d\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c"
            ),
            // Zero-width characters would make two names look alike.
            ("a\u{200B}b\u{200C}c\u{200D}d\u{2060}e\u{FEFF}", "a\\u200bb\\u200cc\\u200dd\\u2060e\\ufeff"),
            // Their neighbours are kept.
            ("\u{200A}\u{2010}\u{2029}\u{202F}\u{2065}\u{206A}", "\u{200A}\u{2010}\\u2029\u{202F}\u{2065}\u{206A}"),
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

    @Test("a name with a bidirectional override or a zero-width space prints escaped in its diagnostic")
    func bidirectionalOverride() throws {
        let json = #"""
            { "format": "group-policy/v1", "id": "p", "capabilities": { "admin": "A" },
              "rules": [ { "id": "r", "match": { "groupType": "ORGANIZATION" },
                           "capabilities": ["ad\u202emin", "adm\u200bin"] } ] }
            """#
        let error = try #require(throws: GroupPolicyError.self) { try policy(json) }
        let lines = error.diagnostics.map(\.description)
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { !$0.unicodeScalars.contains { [0x202E, 0x200B].contains($0.value) } })
        #expect(lines.contains { $0.hasSuffix(#"undeclared capability 'ad\u202emin' (did you mean 'admin'?)"#) })
        #expect(lines.contains { $0.hasSuffix(#"undeclared capability 'adm\u200bin' (did you mean 'admin'?)"#) })
        #expect(!error.description.unicodeScalars.contains { $0.value == 0x202E })
    }
}
