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
