/// JSON string escaping over UTF-8 bytes, as ``JSONWriter`` writes it.
enum JSONEscaping {
    /// Calls `body` with the string's UTF-8 bytes, contiguous.
    @inline(__always)
    static func withUTF8<Result>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    /// Whether a byte must be escaped in a JSON string.
    @inline(__always)
    static func isSpecial(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Whether any byte must be escaped: eight bytes at a time.
    static func needsEscaping(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
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
    static func escapedCount(_ text: String) -> Int {
        withUTF8(text) { bytes in
            guard needsEscaping(bytes) else { return bytes.count }
            var count = 0
            for byte in bytes {
                if !isSpecial(byte) {
                    count += 1
                } else {
                    switch byte {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09, 0x08, 0x0C: count += 2
                    default: count += 6
                    }
                }
            }
            return count
        }
    }

    /// Calls `body` with the escaped text in pieces: runs that need no escape, and escapes.
    static func forEachEscapedRun(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeRawBufferPointer) -> Void) {
        var runStart = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard isSpecial(byte) else {
                index += 1
                continue
            }
            body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[runStart..<index]))
            let hex = Array("0123456789abcdef".utf8)
            let escape: [UInt8] =
                switch byte {
                case UInt8(ascii: "\""): [0x5C, 0x22]
                case UInt8(ascii: "\\"): [0x5C, 0x5C]
                case 0x0A: [0x5C, UInt8(ascii: "n")]
                case 0x0D: [0x5C, UInt8(ascii: "r")]
                case 0x09: [0x5C, UInt8(ascii: "t")]
                case 0x08: [0x5C, UInt8(ascii: "b")]
                case 0x0C: [0x5C, UInt8(ascii: "f")]
                default: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
                }
            escape.withUnsafeBytes(body)
            index += 1
            runStart = index
        }
        body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[runStart..<index]))
    }
}
