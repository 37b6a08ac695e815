/// A strict RFC 8259 lexer over UTF-8 bytes, shared by the runtime's tree reader (policies, test
/// files) and direct response decoder, and by the CLI's streaming shadow-report reader.
///
/// Every member is `@inlinable`: the response decoder's loops call it byte by byte from another
/// module, as they did when the lexer was the runtime's own.
///
/// It is a plain cursor over a buffer the caller keeps alive for the scanner's lifetime. It never
/// recurses on its own (``skipValue(depth:maximumDepth:)`` counts depth and stops at the limit), so
/// no input can exhaust the stack; every malformed byte is an error with its offset, never a trap.
package struct JSONScanner {
    package let bytes: UnsafeBufferPointer<UInt8>
    package var position: Int

    @inlinable
    package init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        self.position = 0
        // A UTF-8 byte order mark is allowed and ignored (RFC 8259 section 8.1).
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            position = 3
        }
    }

    @inlinable
    package var isAtEnd: Bool { position >= bytes.count }

    @inline(__always)
    @inlinable
    package mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    /// The next byte after whitespace, without consuming it; `nil` at the end of input.
    @inline(__always)
    @inlinable
    package mutating func peekByte() -> UInt8? {
        skipWhitespace()
        return position < bytes.count ? bytes[position] : nil
    }

    @inlinable
    package func error(_ message: String, at offset: Int? = nil) -> JSONSyntaxError {
        JSONSyntaxError(offset: offset ?? position, message: message)
    }

    /// Describes what stands at the cursor, for "expected X, found Y" messages.
    @inlinable
    package func describeCurrent() -> String {
        guard position < bytes.count else { return "end of input" }
        let byte = bytes[position]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    /// Consumes `byte` after optional whitespace or throws "expected `what`".
    @inline(__always)
    @inlinable
    package mutating func expect(_ byte: UInt8, _ what: String) throws(JSONSyntaxError) {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else {
            throw error("expected \(what), found \(describeCurrent())")
        }
        position += 1
    }

    /// After a member or element: consumes `,` and returns true, or consumes `close` and returns false.
    @inline(__always)
    @inlinable
    package mutating func commaOrClose(_ close: UInt8, _ what: String) throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        guard position < bytes.count else { throw error("expected ',' or '\(what)', found end of input") }
        let byte = bytes[position]
        if byte == UInt8(ascii: ",") {
            position += 1
            return true
        }
        if byte == close {
            position += 1
            return false
        }
        throw error("expected ',' or '\(what)', found \(describeCurrent())")
    }

    // MARK: Strings

    /// Reads a string token (the cursor at its opening quote) and returns its decoded value.
    @inlinable
    package mutating func readString() throws(JSONSyntaxError) -> String {
        let start = position
        let (contentEnd, hasEscapes) = try scanString()
        if !hasEscapes {
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[(start + 1)..<contentEnd]), as: UTF8.self)
        }
        return try decodeString(from: start + 1, to: contentEnd)
    }

    /// Reads a string token and returns the raw byte range of its content and whether it holds
    /// escape sequences (without them the raw bytes can be compared without building a `String`).
    @inlinable
    package mutating func readRawString() throws(JSONSyntaxError) -> (range: Range<Int>, hasEscapes: Bool) {
        let start = position
        let (contentEnd, hasEscapes) = try scanString()
        return ((start + 1)..<contentEnd, hasEscapes)
    }

    /// Decodes the content of a string whose raw range is already validated.
    @inlinable
    package func decodeString(from start: Int, to end: Int) throws(JSONSyntaxError) -> String {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(end - start)
        var index = start
        while index < end {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\\") else {
                utf8.append(byte)
                index += 1
                continue
            }
            // scanString validated every escape, so the indices below are in range.
            let escape = bytes[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "\""): utf8.append(0x22)
            case UInt8(ascii: "\\"): utf8.append(0x5C)
            case UInt8(ascii: "/"): utf8.append(0x2F)
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            default:  // "u"
                var scalar = hexValue(at: index)
                index += 4
                if scalar >= 0xD800 && scalar < 0xDC00 {
                    let low = hexValue(at: index + 2)
                    index += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicodeScalar = Unicode.Scalar(scalar) else {
                    throw error("invalid \\u escape", at: index - 6)
                }
                utf8.append(contentsOf: String(Character(unicodeScalar)).utf8)
            }
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    @inlinable
    func hexValue(at index: Int) -> UInt32 {
        var value: UInt32 = 0
        for offset in 0..<4 {
            value = value << 4 | UInt32(hexDigit(bytes[index + offset]) ?? 0)
        }
        return value
    }

    @inlinable
    func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Validates a string token: escapes, control characters and UTF-8.
    ///
    /// Leaves the cursor after the closing quote and returns the offset of that quote and whether
    /// the content has escapes (without escapes the raw bytes are the value).
    @inlinable
    mutating func scanString() throws(JSONSyntaxError) -> (contentEnd: Int, hasEscapes: Bool) {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
            throw error("expected a string, found \(describeCurrent())")
        }
        let openingQuote = position
        var index = position + 1
        var hasEscapes = false
        let count = bytes.count
        while true {
            // Plain ASCII runs are the common case; the branch below handles everything else.
            while index < count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
                index += 1
            }
            guard index < count else {
                throw error("unterminated string", at: openingQuote)
            }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                position = index + 1
                return (index, hasEscapes)
            }
            if byte < 0x20 {
                throw error(
                    "control character 0x\(String(byte, radix: 16, uppercase: true)) in a string (use an escape)",
                    at: index
                )
            }
            if byte == UInt8(ascii: "\\") {
                hasEscapes = true
                index = try scanEscape(at: index)
            } else {
                index = try scanUTF8Sequence(at: index)
            }
        }
    }

    /// Validates one escape sequence starting at the backslash; returns the index after it.
    @inlinable
    func scanEscape(at backslash: Int) throws(JSONSyntaxError) -> Int {
        let index = backslash + 1
        guard index < bytes.count else { throw error("unterminated string", at: backslash) }
        switch bytes[index] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return index + 1
        case UInt8(ascii: "u"):
            let high = try readHex4(at: index + 1, escapeStart: backslash)
            if high >= 0xDC00 && high < 0xE000 {
                throw error(
                    "lone low surrogate \\u\(String(high, radix: 16, uppercase: true)) in a string",
                    at: backslash
                )
            }
            guard high >= 0xD800 && high < 0xDC00 else { return index + 5 }
            let next = index + 5
            guard next + 1 < bytes.count, bytes[next] == UInt8(ascii: "\\"), bytes[next + 1] == UInt8(ascii: "u") else {
                throw error(
                    "high surrogate \\u\(String(high, radix: 16, uppercase: true)) without a low surrogate",
                    at: backslash
                )
            }
            let low = try readHex4(at: next + 2, escapeStart: next)
            guard low >= 0xDC00 && low < 0xE000 else {
                throw error(
                    "high surrogate \\u\(String(high, radix: 16, uppercase: true)) without a low surrogate",
                    at: backslash
                )
            }
            return next + 6
        default:
            throw error("invalid escape sequence '\\\(describeByte(bytes[index]))'", at: backslash)
        }
    }

    @inlinable
    func describeByte(_ byte: UInt8) -> String {
        byte >= 0x21 && byte < 0x7F ? String(Character(Unicode.Scalar(byte))) : "0x\(String(byte, radix: 16))"
    }

    @inlinable
    func readHex4(at index: Int, escapeStart: Int) throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("incomplete \\u escape", at: escapeStart) }
        var value: UInt32 = 0
        for offset in 0..<4 {
            guard let digit = hexDigit(bytes[index + offset]) else {
                throw error("invalid \\u escape (expected 4 hex digits)", at: escapeStart)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Validates one multi-byte UTF-8 sequence (RFC 3629: no overlongs, no surrogates, at most
    /// U+10FFFF); returns the index after it.
    @inlinable
    func scanUTF8Sequence(at index: Int) throws(JSONSyntaxError) -> Int {
        let lead = bytes[index]
        let length: Int
        var lowerBound: UInt8 = 0x80
        var upperBound: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            lowerBound = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            upperBound = 0x9F
        case 0xF0:
            length = 4
            lowerBound = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            upperBound = 0x8F
        default:
            throw error("invalid UTF-8 byte 0x\(String(lead, radix: 16, uppercase: true))", at: index)
        }
        guard index + length <= bytes.count else { throw error("truncated UTF-8 sequence", at: index) }
        let second = bytes[index + 1]
        guard second >= lowerBound && second <= upperBound else {
            throw error("invalid UTF-8 sequence", at: index)
        }
        var next = index + 2
        while next < index + length {
            guard bytes[next] & 0xC0 == 0x80 else { throw error("invalid UTF-8 sequence", at: index) }
            next += 1
        }
        return next
    }

    // MARK: Numbers and literals

    /// Reads a number token per the JSON grammar and returns its text (kept as text: the formats
    /// here use no numbers, and huge values must not overflow anything).
    @inlinable
    package mutating func readNumber() throws(JSONSyntaxError) -> String {
        let start = position
        var index = position
        func isDigit(_ index: Int) -> Bool {
            index < bytes.count && bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9")
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard isDigit(index) else { throw error("invalid number", at: start) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if isDigit(index) { throw error("invalid number (leading zero)", at: start) }
        } else {
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard isDigit(index) else { throw error("invalid number (digit expected after '.')", at: start) }
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                index += 1
            }
            guard isDigit(index) else { throw error("invalid number (digit expected in exponent)", at: start) }
            while isDigit(index) { index += 1 }
        }
        position = index
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    /// Reads `true`, `false` or `null` (the cursor at its first letter).
    @inlinable
    package mutating func readLiteral() throws(JSONSyntaxError) -> JSONValue {
        for (text, value) in [("true", JSONValue.bool(true)), ("false", .bool(false)), ("null", .null)]
        where matches(text) {
            position += text.utf8.count
            return value
        }
        throw error("invalid literal (expected true, false or null)")
    }

    @inlinable
    func matches(_ literal: String) -> Bool {
        var index = position
        for byte in literal.utf8 {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
        }
        // A literal must not run into further letters ("nullx", "truee").
        if index < bytes.count {
            let next = bytes[index]
            if (next >= UInt8(ascii: "a") && next <= UInt8(ascii: "z"))
                || (next >= UInt8(ascii: "A") && next <= UInt8(ascii: "Z"))
                || (next >= UInt8(ascii: "0") && next <= UInt8(ascii: "9"))
            {
                return false
            }
        }
        return true
    }

    // MARK: Skipping

    /// Validates and skips one value of any kind, iteratively; `depth` is the nesting depth of the
    /// value's container, so the total nesting never exceeds `maximumDepth`.
    @inlinable
    package mutating func skipValue(depth: Int, maximumDepth: Int) throws(JSONSyntaxError) {
        // Each entry records whether the open container is an object (true) or an array.
        var open: [Bool] = []
        while true {
            guard let byte = peekByte() else { throw error("expected a value, found end of input") }
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = byte == UInt8(ascii: "{")
                guard depth + open.count + 1 <= maximumDepth else {
                    throw error("nesting deeper than \(maximumDepth) levels")
                }
                position += 1
                if peekByte() == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    position += 1
                } else {
                    open.append(isObject)
                    if isObject {
                        _ = try readRawString()
                        try expect(UInt8(ascii: ":"), "':'")
                    }
                    continue
                }
            case UInt8(ascii: "\""): _ = try readRawString()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try readNumber()
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"): _ = try readLiteral()
            default: throw error("expected a value, found \(describeCurrent())")
            }
            // A scalar or an empty container is complete: close every container it completes.
            while let isObject = open.last {
                if try commaOrClose(isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"), isObject ? "}" : "]") {
                    if isObject {
                        skipWhitespace()
                        _ = try readRawString()
                        try expect(UInt8(ascii: ":"), "':'")
                    }
                    break
                }
                open.removeLast()
            }
            if open.isEmpty { return }
        }
    }

    /// Requires that nothing but whitespace follows the top-level value.
    @inlinable
    package mutating func expectEnd() throws(JSONSyntaxError) {
        skipWhitespace()
        guard position == bytes.count else {
            throw error("unexpected \(describeCurrent()) after the JSON value")
        }
    }

    /// Whether the raw bytes in `range` equal `literal` (ASCII keys of a known schema).
    @inlinable @inline(__always)
    package func rawEquals(_ range: Range<Int>, _ literal: StaticString) -> Bool {
        guard range.count == literal.utf8CodeUnitCount else { return false }
        let pointer = literal.utf8Start
        var index = 0
        while index < range.count {
            if bytes[range.lowerBound + index] != pointer[index] { return false }
            index += 1
        }
        return true
    }
}
