/// An HTTP answer as an ``HTTPTransport`` received it: status, header fields and the whole body.
public struct HTTPResponse: Sendable, Hashable {
    /// The status code, such as 200 or 429.
    public var status: Int
    /// The header fields, names lowercased (HTTP field names are case-insensitive).
    public private(set) var headerFields: [String: String]
    /// The body.
    public var body: [UInt8]

    /// Creates a response; header names are lowercased.
    ///
    /// - Parameters:
    ///   - status: The status code.
    ///   - headerFields: The header fields, names in any case.
    ///   - body: The body.
    public init(status: Int, headerFields: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        var fields: [String: String] = [:]
        for (name, value) in headerFields { fields[name.lowercased()] = value }
        self.headerFields = fields
        self.body = body
    }

    /// The value of a header field, looked up case-insensitively.
    ///
    /// - Parameter name: The field name, in any case.
    /// - Returns: The value, or `nil` when the answer has no such field.
    public func value(forHeader name: String) -> String? {
        headerFields[name.lowercased()]
    }

    /// The length the `Content-Length` field announces, or `nil` without a usable one.
    ///
    /// A number too large for an `Int` (such as 10^23) reads as `Int.max`, which is over any limit.
    var announcedLength: Int? {
        value(forHeader: "Content-Length").flatMap(Self.announcedLength)
    }

    /// The length a `Content-Length` value announces; `Int.max` for a number too large for an `Int`,
    /// `nil` when it is not a number.
    static func announcedLength(_ value: String) -> Int? {
        let digits = value.utf8.drop { $0 == UInt8(ascii: " ") }.prefix { $0 != UInt8(ascii: " ") }
        guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(String(decoding: digits, as: UTF8.self)) ?? Int.max
    }
}
