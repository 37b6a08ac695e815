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
