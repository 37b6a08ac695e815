extension String {
    /// This text with every control character escaped the way JSON escapes it (`\n`, `\t`,
    /// `\u001b`), so that a decoded string quoted in a diagnostic, an error or a log line cannot
    /// break the line it is printed on, or change how it reads.
    ///
    /// A newline in a policy id, a file name or Apple's `errorMessage` would otherwise start a line
    /// of its own, which a CI system may read as an annotation (`::error file=…`) and a log reader
    /// as another entry; ESC would drive the terminal; a bidirectional override or isolate (U+202E)
    /// would reorder what follows it on screen, so a log line shows other text than it holds
    /// ("Trojan source"), and a zero-width character would make two names look alike. Escaped: the
    /// C0 and C1 controls, DEL, the Unicode line and paragraph separators, the bidirectional
    /// formatting characters (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) and the
    /// zero-width ones (U+200B-U+200D, U+2060, U+FEFF). Every other character, backslashes
    /// included, is kept, so ordinary messages read exactly as before.
    package var escapingControlCharacters: String {
        guard unicodeScalars.contains(where: Self.needsEscaping) else { return self }
        var text = ""
        text.unicodeScalars.reserveCapacity(unicodeScalars.count + 16)
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{08}": text += "\\b"
            case "\u{0C}": text += "\\f"
            case _ where Self.needsEscaping(scalar):
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    private static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: true
        // Bidirectional formatting, and zero-width characters.
        case 0x061C, 0x200B...0x200F, 0x202A...0x202E, 0x2060, 0x2066...0x2069, 0xFEFF: true
        default: false
        }
    }
}
