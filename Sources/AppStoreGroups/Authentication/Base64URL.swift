import Foundation

/// Base64url without padding (RFC 7515), the encoding of every part of a JWS.
enum Base64URL {
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return String(
            text.map { character in
                switch character {
                case "+": "-"
                case "/": "_"
                default: character
                }
            }
        )
    }
}
