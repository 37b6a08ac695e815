extension JSONWriter {
    /// Appends `text` to `bytes` as a JSON string literal: quoted, with the escapes JSON requires.
    ///
    /// The package's one JSON string escaping: the writer, the Decision's and the explanation's JSON
    /// quote through it, and a writer that streams its output appends its strings with this
    /// function rather than escaping them itself. `"` and `\` are escaped with a backslash; newline, return, tab,
    /// backspace and form feed as `\n`, `\r`, `\t`, `\b`, `\f`; every other byte below 0x20 as
    /// `\u00XX` (lowercase hex); everything else, non-ASCII included, is copied as it is. A run that
    /// needs no escape is copied whole.
    package static func appendQuoted(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        withUTF8(text) { utf8 in
            if needsEscaping(utf8) {
                forEachEscapedRun(utf8) { bytes.append(contentsOf: $0) }
            } else {
                bytes.append(contentsOf: utf8)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A JSON string literal for `text`: quoted, escaped (see ``appendQuoted(_:to:)``).
    package static func quoted(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 2)
        appendQuoted(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Calls `body` with the string's UTF-8 bytes, contiguous.
    @inlinable @inline(__always)
    package static func withUTF8<Result>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    /// Whether a byte must be escaped in a JSON string.
    @inlinable @inline(__always)
    package static func isSpecial(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Whether any byte must be escaped: eight bytes at a time.
    @inlinable
    package static func needsEscaping(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = bytes.baseAddress else { return false }
        let raw = UnsafeRawPointer(start)
        var index = 0
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while index + 8 <= bytes.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            // A byte below 0x20, or equal to '"' (0x22) or '\' (0x5C): the zero-byte test on each.
            let control = (word &- ones &* 0x20) & ~word
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let hasQuote = (quote &- ones) & ~quote
            let hasBackslash = (backslash &- ones) & ~backslash
            if (control | hasQuote | hasBackslash) & highs != 0 { return true }
            index += 8
        }
        while index < bytes.count {
            if isSpecial(bytes[index]) { return true }
            index += 1
        }
        return false
    }

    /// The escaped length of `text`, without quotes.
    @inlinable @inline(__always)
    package static func escapedCount(_ text: String) -> Int {
        withUTF8(text) { bytes in
            guard needsEscaping(bytes) else { return bytes.count }
            var count = 0
            for byte in bytes {
                count += isSpecial(byte) ? withEscape(of: byte) { $0.count } : 1
            }
            return count
        }
    }

    /// Calls `body` with the escaped text in pieces: runs that need no escape, and escapes.
    @inlinable @inline(__always)
    package static func forEachEscapedRun(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeRawBufferPointer) -> Void)
    {
        let raw = UnsafeRawBufferPointer(bytes)
        var runStart = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard isSpecial(byte) else {
                index += 1
                continue
            }
            body(UnsafeRawBufferPointer(rebasing: raw[runStart..<index]))
            withEscape(of: byte, body)
            index += 1
            runStart = index
        }
        body(UnsafeRawBufferPointer(rebasing: raw[runStart..<index]))
    }

    /// Calls `body` with the escape of a byte that ``isSpecial(_:)``.
    @inlinable @inline(__always)
    static func withEscape<Result>(of byte: UInt8, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        var escape: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0x5C, 0, 0x30, 0x30, 0, 0)
        var count = 2
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): escape.1 = byte
        case 0x0A: escape.1 = UInt8(ascii: "n")
        case 0x0D: escape.1 = UInt8(ascii: "r")
        case 0x09: escape.1 = UInt8(ascii: "t")
        case 0x08: escape.1 = UInt8(ascii: "b")
        case 0x0C: escape.1 = UInt8(ascii: "f")
        default:
            // \u00XX, lowercase: a byte below 0x20 has the high digit 0 or 1.
            let low = byte & 0x0F
            escape.1 = UInt8(ascii: "u")
            escape.4 = 0x30 + (byte >> 4)
            escape.5 = low < 10 ? 0x30 + low : UInt8(ascii: "a") + low - 10
            count = 6
        }
        return withUnsafeBytes(of: &escape) { body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }
}
