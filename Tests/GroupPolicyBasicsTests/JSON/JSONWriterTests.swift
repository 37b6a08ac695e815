import Testing

@testable import GroupPolicyBasics

/// The writer's string escaping, exactly: runs without escapes are copied whole, so the cases put
/// escapes at the start, the end, next to each other and between runs.
@Suite struct JSONWriterTests {
    @Test(
        arguments: [
            ("", #""""#),
            ("plain", #""plain""#),
            ("\"", #""\"""#),
            ("a\"b\\c", #""a\"b\\c""#),
            ("\n\r\t\u{8}\u{c}", #""\n\r\t\b\f""#),
            ("x\u{1}y\u{1f}", #""x\u0001y\u001f""#),
            ("\u{e9}t\u{e9} \u{1F600}/", "\"\u{e9}t\u{e9} \u{1F600}/\""),
            ("end\\", #""end\\""#),
        ]
    )
    func escapesStrings(text: String, json: String) {
        var writer = JSONWriter(pretty: false)
        writer.string(text)
        #expect(writer.string == json)
    }

    /// The package's one escaping, as the other modules call it: appended after what a streamed
    /// writer already holds, and as a literal, the same bytes as the writer's.
    @Test func appendQuotedAndQuotedAgreeWithTheWriter() {
        let controls = (0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) }
        let text = "id \"x\"\\" + String(controls) + "\u{e9}\u{7f}"
        var streamed = Array("{\"members\": [".utf8)
        JSONWriter.appendQuoted(text, to: &streamed)
        var writer = JSONWriter(pretty: false)
        writer.string(text)
        #expect(streamed == Array("{\"members\": [".utf8) + writer.output)
        #expect(JSONWriter.quoted(text) == writer.string)
        let expected =
            #""id \"x\"\\\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f"#
            + #"\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f"#
            + "\u{e9}\u{7f}\""
        #expect(JSONWriter.quoted(text) == expected)
        #expect(JSONWriter.escapedCount(text) == expected.utf8.count - 2)
    }
}
