/// Where a two-pass JSON encoder writes: a counter measures the exact size, then a buffer of that
/// capacity receives the bytes (one allocation, no intermediate strings).
protocol JSONByteOutput {
    /// Appends raw bytes (already JSON: punctuation, pre-escaped fragments).
    mutating func append(_ bytes: UnsafeRawBufferPointer)
    /// Appends one byte.
    mutating func append(byte: UInt8)
    /// Appends `text` escaped for a JSON string, without quotes; `plain` says it is known to need no
    /// escape.
    mutating func appendEscaped(_ text: String, plain: Bool)
}

extension JSONByteOutput {
    /// Appends ASCII punctuation or a key fragment.
    @inline(__always)
    mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends `text` as a JSON string literal.
    mutating func appendQuoted(_ text: String, plain: Bool) {
        append(byte: UInt8(ascii: "\""))
        appendEscaped(text, plain: plain)
        append(byte: UInt8(ascii: "\""))
    }
}

/// Counts the bytes an encoder would write.
struct JSONByteCounter: JSONByteOutput {
    var count = 0

    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer) { count += bytes.count }
    @inline(__always)
    mutating func append(byte: UInt8) { count += 1 }
    @inline(__always)
    mutating func appendEscaped(_ text: String, plain: Bool) {
        count += plain ? text.utf8.count : JSONEscaping.escapedCount(text)
    }
}

/// Writes into a buffer of fixed capacity; a write that would overrun it is dropped and marks the
/// output as overflowed (the caller then writes again into a growing array).
struct JSONByteBuffer: JSONByteOutput {
    let base: UnsafeMutableRawPointer?
    let capacity: Int
    var count = 0
    var overflowed = false

    /// A buffer of `capacity` bytes at `base` (which may be `nil` only when `capacity` is 0).
    init(base: UnsafeMutablePointer<UInt8>?, capacity: Int) {
        self.base = base.map { UnsafeMutableRawPointer($0) }
        self.capacity = base == nil ? 0 : capacity
    }

    /// Copies short pieces (most of them: punctuation, keys, ids) with overlapping word moves
    /// instead of a call to `memcpy`.
    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        let length = bytes.count
        guard let source = bytes.baseAddress, let base, length <= capacity - count else {
            if bytes.count > 0 { overflowed = true }
            return
        }
        let target = base + count
        count += length
        if length >= 8 {
            guard length <= 16 else {
                target.copyMemory(from: source, byteCount: length)
                return
            }
            let head = source.loadUnaligned(as: UInt64.self)
            let tail = source.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self)
            target.storeBytes(of: head, as: UInt64.self)
            target.storeBytes(of: tail, toByteOffset: length - 8, as: UInt64.self)
        } else if length >= 4 {
            let head = source.loadUnaligned(as: UInt32.self)
            let tail = source.loadUnaligned(fromByteOffset: length - 4, as: UInt32.self)
            target.storeBytes(of: head, as: UInt32.self)
            target.storeBytes(of: tail, toByteOffset: length - 4, as: UInt32.self)
        } else {
            for index in 0..<length {
                target.storeBytes(
                    of: source.load(fromByteOffset: index, as: UInt8.self),
                    toByteOffset: index,
                    as: UInt8.self
                )
            }
        }
    }

    @inline(__always)
    mutating func append(byte: UInt8) {
        guard let base, count < capacity else {
            overflowed = true
            return
        }
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    @inline(__always)
    mutating func appendEscaped(_ text: String, plain: Bool) {
        JSONEscaping.withUTF8(text) { bytes in
            if plain || !JSONEscaping.needsEscaping(bytes) {
                append(UnsafeRawBufferPointer(bytes))
            } else {
                JSONEscaping.forEachEscapedRun(bytes) { append($0) }
            }
        }
    }
}

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
