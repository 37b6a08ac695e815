import GroupPolicyBasics

/// Counts the bytes an encoder would write.
struct JSONByteCounter: JSONByteOutput {
    var count = 0

    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer) { count += bytes.count }
    @inline(__always)
    mutating func append(byte: UInt8) { count += 1 }
    @inline(__always)
    mutating func appendEscaped(_ text: String, plain: Bool) {
        count += plain ? text.utf8.count : JSONWriter.escapedCount(text)
    }
}
