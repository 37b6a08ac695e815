import GroupPolicy
import GroupPolicyBasics

/// Just enough JSON to write this server's answers.
enum JSON: Sendable {
    case string(String)
    case number(Int)
    case array([JSON])
    case object([(String, JSON)])

    /// Compact JSON text.
    var bytes: [UInt8] { Array(text.utf8) }

    var text: String {
        switch self {
        case .string(let value): Self.quoted(value)
        case .number(let value): String(value)
        case .array(let elements): "[" + elements.map(\.text).joined(separator: ",") + "]"
        case .object(let members):
            "{" + members.map { Self.quoted($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }

    /// A JSON string literal, escaped as every JSON the package writes is.
    private static func quoted(_ value: String) -> String {
        JSONWriter.quoted(value)
    }
}
