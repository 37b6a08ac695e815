/// One request as the server read it: the request line, the header fields, and the body.
///
/// The head is kept as the bytes that came (without the blank line that ends it); header fields
/// are looked up in it by name, so reading a request costs one copy of its head and nothing per
/// field a handler never asks for.
package struct HTTPRequest: Sendable {
    /// The request line and the header fields, CR LF between lines.
    package let head: [UInt8]
    /// The method, as sent (`GET`, `POST`…).
    package let method: String
    /// The request target's path, without its query, as UTF-8 (invalid bytes replaced).
    package let path: String
    /// Where the query starts in `head` (after the `?`), and where it ends; empty without one.
    let query: Range<Int>
    /// Where the header fields start in `head`: after the request line's CR LF, or its end.
    let fieldsStart: Int
    /// Whether the request line says `HTTP/1.0`.
    package let isHTTP10: Bool
    /// The body: as many bytes as `Content-Length` announced, none without it.
    package var body: [UInt8]

    /// A request of these parts, for tests and handlers that build one.
    package init(method: String, target: String, fields: [(String, String)] = [], body: [UInt8] = []) {
        var text = "\(method) \(target) HTTP/1.1"
        for (name, value) in fields { text += "\r\n\(name): \(value)" }
        let head = Array(text.utf8)
        // A request built here is well formed: the parser cannot refuse it.
        let parsed = head.withUnsafeBufferPointer { try? Self.parse($0, maximumBodyBytes: Int.max) }
        self = parsed?.request ?? Self(head: head)
        self.body = body
    }

    private init(head: [UInt8]) {
        self.head = head
        self.method = ""
        self.path = ""
        self.query = 0..<0
        self.fieldsStart = head.count
        self.isHTTP10 = false
        self.body = []
    }

    init(
        head: [UInt8],
        method: String,
        path: String,
        query: Range<Int>,
        fieldsStart: Int,
        isHTTP10: Bool
    ) {
        self.head = head
        self.method = method
        self.path = path
        self.query = query
        self.fieldsStart = fieldsStart
        self.isHTTP10 = isHTTP10
        self.body = []
    }

    /// The query as sent (without the `?`), or empty.
    package var rawQuery: String {
        String(decoding: head[query], as: UTF8.self)
    }

    /// Every value of the header field `name` (compared without regard to case), in order, each
    /// without the spaces and tabs around it.
    package func headerValues(_ name: String) -> [String] {
        var values: [String] = []
        forEachField { fieldName, value in
            if Self.equalsIgnoringCase(fieldName, name) {
                values.append(String(decoding: value, as: UTF8.self))
            }
        }
        return values
    }

    /// The one value of a header field, `nil` when it is missing; a field given more than once is
    /// `nil` too, so callers refuse it.
    package func header(_ name: String) -> String? {
        let values = headerValues(name)
        return values.count == 1 ? values[0] : nil
    }

    /// The query's `name=value` pairs, `&` between them (empty pieces skipped), each decoded as a
    /// form is: `+` is a space, then percent-decoding; `nil` when a `%` is not followed by two hex
    /// digits or a decoded name or value is not UTF-8.
    package func queryItems() -> [(name: String, value: String)]? {
        var items: [(name: String, value: String)] = []
        var start = query.lowerBound
        while start < query.upperBound {
            var end = start
            while end < query.upperBound, head[end] != UInt8(ascii: "&") { end += 1 }
            if end > start {
                var equals = start
                while equals < end, head[equals] != UInt8(ascii: "=") { equals += 1 }
                guard let name = Self.formDecoded(head[start..<equals]),
                    let value = Self.formDecoded(equals < end ? head[(equals + 1)..<end] : head[end..<end])
                else { return nil }
                items.append((name, value))
            }
            start = end + 1
        }
        return items
    }

    /// `+` as a space, `%XX` as its byte; `nil` for a broken escape or bytes that are not UTF-8.
    static func formDecoded(_ bytes: ArraySlice<UInt8>) -> String? {
        if !bytes.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) {
            return String(validating: bytes, as: UTF8.self)
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                decoded.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex, let high = hexValue(bytes[index + 1]),
                    let low = hexValue(bytes[index + 2])
                else { return nil }
                decoded.append(high << 4 | low)
                index += 2
            } else {
                decoded.append(byte)
            }
            index += 1
        }
        return String(validating: decoded, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Calls `body` with each field's name and trimmed value.
    func forEachField(_ body: (ArraySlice<UInt8>, ArraySlice<UInt8>) -> Void) {
        var start = fieldsStart
        while start < head.count {
            var end = start
            while end < head.count, head[end] != 13 { end += 1 }
            if let colon = head[start..<end].firstIndex(of: UInt8(ascii: ":")) {
                body(head[start..<colon], Self.trimmed(head[(colon + 1)..<end]))
            }
            start = end + 2
        }
    }

    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == 32 || first == 9 { slice = slice.dropFirst() }
        while let last = slice.last, last == 32 || last == 9 { slice = slice.dropLast() }
        return slice
    }

    static func equalsIgnoringCase(_ bytes: ArraySlice<UInt8>, _ name: String) -> Bool {
        var utf8 = name.utf8.makeIterator()
        for byte in bytes {
            guard let other = utf8.next(), lowercased(byte) == lowercased(other) else { return false }
        }
        return utf8.next() == nil
    }

    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
