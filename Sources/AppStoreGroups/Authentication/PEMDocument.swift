import Foundation

/// The DER bytes of the private key block of a PEM file.
///
/// Only unencrypted private key blocks are accepted: `PRIVATE KEY` (PKCS#8, the `.p8` App Store
/// Connect hands out) and `EC PRIVATE KEY` (SEC1). Errors name what was found, never the content.
struct PEMDocument {
    /// The block's label, such as `PRIVATE KEY`.
    var label: String
    /// The block's decoded content.
    var der: [UInt8]

    static let privateKeyLabels: Set<String> = ["PRIVATE KEY", "EC PRIVATE KEY"]

    init(privateKeyPEM text: String) throws(AppStoreGroupsError) {
        let lines = text.split(whereSeparator: \.isNewline).map { line in
            String(line.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        }
        var labels: [String] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            index += 1
            guard line.hasPrefix("-----BEGIN "), line.hasSuffix("-----"), line.count > 16 else { continue }
            let label = String(line.dropFirst(11).dropLast(5))
            labels.append(label)
            guard Self.privateKeyLabels.contains(label) else { continue }
            var base64 = ""
            while index < lines.count, lines[index] != "-----END \(label)-----" {
                base64 += lines[index]
                index += 1
            }
            guard index < lines.count else {
                throw Self.invalid("the PEM block '\(label)' has no END line")
            }
            guard let der = Data(base64Encoded: base64), !der.isEmpty else {
                throw Self.invalid("the PEM block '\(label)' is not valid base64")
            }
            self.label = label
            self.der = Array(der)
            return
        }
        if labels.contains("ENCRYPTED PRIVATE KEY") {
            throw Self.invalid("the private key is encrypted; export it without a passphrase (.p8 as downloaded)")
        }
        if labels.contains("PUBLIC KEY") {
            throw Self.invalid("the PEM holds a public key; the client needs the private key (.p8)")
        }
        if labels.contains(where: { $0.hasSuffix("PRIVATE KEY") }) {
            throw Self.invalid("the PEM holds a private key that is not an EC P-256 key")
        }
        throw Self.invalid("no '-----BEGIN PRIVATE KEY-----' block found")
    }

    static func invalid(_ message: String) -> AppStoreGroupsError {
        AppStoreGroupsError(code: .invalidPrivateKey, message: "invalid private key: \(message)")
    }
}
