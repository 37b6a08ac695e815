/// A parsed JSON value whose every node remembers the byte offset it started at, so that errors
/// found later (policy validation) can name a line and column.
package enum JSONValue: Equatable {
    case null
    case bool(Bool)
    /// The number's text exactly as written (never converted, so nothing overflows).
    case number(String)
    case string(String)
    case array([JSONNode])
    case object([JSONMember])

    /// The JSON type's name for "expected X, found Y" messages.
    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A JSON value and the byte range it spans in its document.
package struct JSONNode: Equatable {
    package var offset: Int
    package var value: JSONValue
    /// The offset just past the value's last character.
    package var end: Int = 0
}

/// One member of a JSON object, in document order.
package struct JSONMember: Equatable {
    package var key: String
    var keyOffset: Int
    package var value: JSONNode
}
