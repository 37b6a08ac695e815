import Testing

@testable import GroupPolicyBasics

/// The one-line escaping's promise, at the edges of each range it names: escaped exactly as JSON
/// escapes (the five short escapes, lowercase `\uXXXX` for the rest), and everything else kept.
@Suite struct StringOneLineTests {
    @Test func everyC0ControlIsEscapedAsJSONEscapesIt() {
        let text = String(String.UnicodeScalarView((0..<0x20).compactMap { Unicode.Scalar($0) }))
        #expect(
            text.escapingControlCharacters
                == #"\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f"#
                + #"\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f"#
        )
    }

    @Test(
        arguments: [
            // The ends of C0, DEL and C1, and their neighbours, which are kept.
            ("\u{1F}\u{20}\u{7E}\u{7F}\u{80}\u{9F}\u{A0}", "\\u001f \u{7E}\\u007f\\u0080\\u009f\u{A0}"),
            // Every bidirectional formatting character the comment names.
            (
                "\u{61C}\u{200E}\u{200F}\u{202A}\u{202B}\u{202C}\u{202D}\u{202E}\u{2066}\u{2067}\u{2068}\u{2069}",
                #"\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"#
            ),
            // Every zero-width character it names, and the separators.
            (
                "\u{200B}\u{200C}\u{200D}\u{2060}\u{FEFF}\u{2028}\u{2029}",
                #"\u200b\u200c\u200d\u2060\ufeff\u2028\u2029"#
            ),
            // The neighbours of those ranges are kept.
            (
                "\u{61B}\u{61D}\u{2027}\u{202F}\u{2061}\u{2065}\u{206A}\u{FEFE}\u{FFFE}",
                "\u{61B}\u{61D}\u{2027}\u{202F}\u{2061}\u{2065}\u{206A}\u{FEFE}\u{FFFE}"
            ),
            // A carriage return and line feed are one Character and two escapes.
            ("line\r\nnext", #"line\r\nnext"#),
            // A joined emoji holds zero-width joiners, which are escaped like any other.
            ("\u{1F468}\u{200D}\u{1F469}", "\u{1F468}\\u200d\u{1F469}"),
            // Backslashes and quotes are kept as they are, not doubled.
            (#"C:\path\n "quoted" \u0041"#, #"C:\path\n "quoted" \u0041"#),
            ("", ""),
            ("\u{E9}t\u{E9} \u{65}\u{301} \u{1F600}", "\u{E9}t\u{E9} \u{65}\u{301} \u{1F600}"),
        ]
    )
    func escapesExactlyTheNamedCharacters(text: String, expected: String) {
        #expect(text.escapingControlCharacters == expected)
        #expect(text.escapingControlCharacters.unicodeScalars.elementsEqual(expected.unicodeScalars))
    }
}
