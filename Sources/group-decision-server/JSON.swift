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

    /// A JSON string literal, escaped as every JSON the package writes is: `"` and `\` with a
    /// backslash; newline, return, tab, backspace and form feed as `\n`, `\r`, `\t`, `\b`, `\f`;
    /// every other byte below 0x20 as `\u00XX`; everything else as it is.
    static func quoted(_ value: String) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "\"")]
        bytes.reserveCapacity(value.utf8.count + 2)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), byte]
            case 0x0A: bytes += Array("\\n".utf8)
            case 0x0D: bytes += Array("\\r".utf8)
            case 0x09: bytes += Array("\\t".utf8)
            case 0x08: bytes += Array("\\b".utf8)
            case 0x0C: bytes += Array("\\f".utf8)
            case ..<0x20: bytes += Array("\\u00".utf8) + [hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
        return String(decoding: bytes, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
