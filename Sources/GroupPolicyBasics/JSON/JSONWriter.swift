/// Writes JSON text directly, in the caller's key order.
///
/// Compact, or pretty with two-space indentation and `"key": value`. Empty containers print as `[]`
/// and `{}`. It owns the package's JSON string escaping (``appendQuoted(_:to:)``), which every
/// JSON the package writes goes through; package-visible for the package's other modules.
package struct JSONWriter {
    package private(set) var output: [UInt8] = []
    package let pretty: Bool
    private var indent = 0
    /// Per open container: whether it has an element yet (for commas) — true after the first.
    private var hasElements: [Bool] = []
    private var afterKey = false

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

    package mutating func bool(_ value: Bool) {
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

    /// A key with a string value, or `null` when there is none.
    package mutating func member(_ name: String, orNull value: String?) {
        key(name)
        if let value { string(value) } else { null() }
    }

    /// A key with a whole number.
    package mutating func member(_ name: String, number value: Int) {
        key(name)
        number(Int64(value))
    }

    /// A key with an array of `elements`, each written by `body`.
    package mutating func member<Element>(
        _ name: String,
        array elements: some Sequence<Element>,
        _ body: (inout JSONWriter, Element) -> Void
    ) {
        key(name)
        beginArray()
        for element in elements { body(&self, element) }
        endArray()
    }

    /// A key with an array of objects, one per element, whose members `body` writes.
    package mutating func member<Element>(
        _ name: String,
        objects elements: some Sequence<Element>,
        _ body: (inout JSONWriter, Element) -> Void
    ) {
        member(name, array: elements) { writer, element in
            writer.beginObject()
            body(&writer, element)
            writer.endObject()
        }
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
        Self.appendQuoted(text, to: &output)
    }
}
