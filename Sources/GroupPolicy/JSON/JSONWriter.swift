/// Writes JSON text directly, in the caller's key order.
///
/// Compact, or pretty with two-space indentation and `"key": value`. Empty containers print as `[]`
/// and `{}`. Package-visible so the package's other modules quote JSON strings the same way.
package struct JSONWriter {
    private(set) var output: [UInt8] = []
    let pretty: Bool
    private var indent = 0
    /// Per open container: whether it has an element yet (for commas) — true after the first.
    private var hasElements: [Bool] = []
    private var afterKey = false

    /// A JSON string literal for `text`: quoted, with the escapes JSON requires.
    package static func quoted(_ text: String) -> String {
        var writer = JSONWriter(pretty: false, reservingCapacity: text.utf8.count + 2)
        writer.string(text)
        return writer.string
    }

    package init(pretty: Bool, reservingCapacity capacity: Int = 256) {
        self.pretty = pretty
        output.reserveCapacity(capacity)
    }

    package var string: String { String(decoding: output, as: UTF8.self) }

    package mutating func beginObject() { open(UInt8(ascii: "{")) }
    package mutating func endObject() { close(UInt8(ascii: "}")) }
    package mutating func beginArray() { open(UInt8(ascii: "[")) }
    package mutating func endArray() { close(UInt8(ascii: "]")) }

    package mutating func key(_ key: String) {
        separate()
        appendQuoted(key)
        output.append(UInt8(ascii: ":"))
        if pretty { output.append(UInt8(ascii: " ")) }
        afterKey = true
    }

    package mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
    }

    mutating func bool(_ value: Bool) {
        separate()
        output.append(contentsOf: (value ? "true" : "false").utf8)
    }

    package mutating func number(_ value: Int64) {
        separate()
        output.append(contentsOf: String(value).utf8)
    }

    package mutating func null() {
        separate()
        output.append(contentsOf: "null".utf8)
    }

    /// A key with a string value.
    package mutating func member(_ name: String, _ value: String) {
        key(name)
        string(value)
    }

    /// A key with an array of strings.
    package mutating func member(_ name: String, strings: some Sequence<String>) {
        key(name)
        beginArray()
        for value in strings { string(value) }
        endArray()
    }

    private mutating func open(_ byte: UInt8) {
        separate()
        output.append(byte)
        hasElements.append(false)
        indent += 1
    }

    private mutating func close(_ byte: UInt8) {
        indent -= 1
        if hasElements.removeLast() { newline() }
        output.append(byte)
    }

    /// Writes the comma and line break a new element or key needs; a value right after its key
    /// needs none.
    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        guard !hasElements.isEmpty else { return }
        if hasElements[hasElements.count - 1] { output.append(UInt8(ascii: ",")) }
        hasElements[hasElements.count - 1] = true
        newline()
    }

    private mutating func newline() {
        guard pretty else { return }
        output.append(0x0A)
        var remaining = indent * 2
        while remaining > 0 {
            let count = min(remaining, Self.spaces.count)
            output.append(contentsOf: Self.spaces[0..<count])
            remaining -= count
        }
    }

    private static let spaces = [UInt8](repeating: 0x20, count: 64)

    private mutating func appendQuoted(_ text: String) {
        output.append(UInt8(ascii: "\""))
        if text.utf8.withContiguousStorageIfAvailable({ appendEscaped($0) }) == nil {
            Array(text.utf8).withUnsafeBufferPointer { appendEscaped($0) }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Appends the bytes, escaped for a JSON string: runs that need no escape are copied whole
    /// (appending byte by byte was half the cost of encoding a decision with provenance).
    private mutating func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 else {
                index += 1
                continue
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): output.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: output.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: output.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            default:
                let hex = Array("0123456789abcdef".utf8)
                output.append(contentsOf: [
                    0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)],
                ])
            }
            index += 1
            runStart = index
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
    }
}
