extension String {
    /// This text with every control character escaped the way JSON escapes it (`\n`, `\t`,
    /// `\u001b`), so that a decoded string quoted in a diagnostic, an error or a log line cannot
    /// break the line it is printed on.
    ///
    /// A newline in a policy id, a file name or Apple's `errorMessage` would otherwise start a line
    /// of its own, which a CI system may read as an annotation (`::error file=…`) and a log reader
    /// as another entry; ESC would drive the terminal. The C0 and C1 controls, DEL and the Unicode
    /// line and paragraph separators are escaped; every other character, backslashes included,
    /// is kept, so ordinary messages read exactly as before.
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
        default: false
        }
    }
}
