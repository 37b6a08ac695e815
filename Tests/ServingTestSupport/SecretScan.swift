package import AppStoreGroups
import Foundation
package import Testing

/// What must never appear in an error's text, a log line or the CLI's output: the signing key in any spelling a leak
/// could take, and bearer tokens.
///
/// Forbidden: the PEM's armour and body lines; every 16-character run of the key's base64, in standard and URL
/// alphabets (so a line rewrapped or cut anywhere is still caught); the raw private scalar in hex, base64 and
/// base64url; each token the server saw, its claims and its signature; and `eyJ`, which starts the base64url of `{"`
/// and so every JWT header and claims segment, including tokens no server saw.
package struct SecretScan {
    private var forbidden: [(what: String, text: String)] = []

    /// - Parameters:
    ///   - key: The fixture the client signed with.
    ///   - tokens: Tokens a server received.
    /// - Throws: When the key fixture cannot be read or holds no P-256 private scalar.
    package init(key: String = "test-key.p8", tokens: [String] = []) throws {
        let pem = try TestFiles.text(key)
        forbidden.append(("the PEM armour", "PRIVATE KEY"))
        forbidden.append(("a JWT-shaped string", "eyJ"))
        let lines = Self.keyMaterial(pem)
        for line in lines { forbidden.append(("a line of the PEM body", line)) }
        let base64 = lines.joined()
        let base64URL = Self.urlAlphabet(base64)
        for text in [base64, base64URL] where text.count >= 16 {
            let characters = Array(text)
            for start in 0...(characters.count - 16) {
                forbidden.append(("16 characters of the key's base64", String(characters[start..<start + 16])))
            }
        }
        let der = try #require(Data(base64Encoded: base64).map(Array.init), "the fixture's body is not base64")
        let scalar = try #require(Self.privateScalar(der), "no P-256 private scalar in the fixture")
        forbidden.append(("the private scalar in hex", scalar.map { String(format: "%02x", $0) }.joined()))
        forbidden.append(("the private scalar in hex", scalar.map { String(format: "%02X", $0) }.joined()))
        let scalarBase64 = Data(scalar).base64EncodedString()
        forbidden.append(("the private scalar in base64", String(scalarBase64.prefix(40))))
        forbidden.append(("the private scalar in base64url", String(Self.urlAlphabet(scalarBase64).prefix(40))))
        for token in tokens {
            forbidden.append(("a token", token))
            for segment in token.split(separator: ".") where segment.count >= 16 {
                forbidden.append(("a segment of a token", String(segment)))
            }
        }
    }

    /// What `text` holds that it must not, each kind named once, in the order of the list above.
    package func findings(in text: String) -> [String] {
        var found: [String] = []
        for (what, secret) in forbidden where text.contains(secret) && !found.contains(what) {
            found.append(what)
        }
        return found
    }

    /// Records an issue for every kind of secret in `text`.
    package func check(_ text: String, _ label: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        for what in findings(in: text) {
            Issue.record("\(label) holds \(what)", sourceLocation: sourceLocation)
        }
    }

    /// Checks every text an error shows: its description, its reflection and its fields.
    package func check(_ error: AppStoreGroupsError?, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        guard let error else { return }
        check(error.description, "the error's description", sourceLocation: sourceLocation)
        check(String(reflecting: error), "the error's reflection", sourceLocation: sourceLocation)
        check(error.message, "the error's message", sourceLocation: sourceLocation)
        check(error.apiErrorMessage ?? "", "the error's apiErrorMessage", sourceLocation: sourceLocation)
    }

    /// Checks both outputs of a CLI run.
    package func check(_ result: ProcessResult, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        check(result.standardOutput, "the CLI's stdout", sourceLocation: sourceLocation)
        check(result.standardError, "the CLI's stderr", sourceLocation: sourceLocation)
    }

    private static func urlAlphabet(_ base64: String) -> String {
        base64.replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
    }

    /// The 32-byte scalar of a P-256 PKCS#8 or SEC1 key: the OCTET STRING after `version 1`.
    private static func privateScalar(_ der: [UInt8]) -> [UInt8]? {
        let marker: [UInt8] = [0x02, 0x01, 0x01, 0x04, 0x20]
        guard der.count > marker.count + 32 else { return nil }
        for start in 0...(der.count - marker.count - 32) where Array(der[start..<start + marker.count]) == marker {
            return Array(der[(start + marker.count)..<(start + marker.count + 32)])
        }
        return nil
    }

    /// The lines of a PEM document's body (its armour left out): what no error text may repeat.
    package static func keyMaterial(_ pem: String) -> [String] {
        pem.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("-----") && $0.count >= 8 }
    }
}
