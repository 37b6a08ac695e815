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

    private static func quoted(_ value: String) -> String {
        var text = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }
}
