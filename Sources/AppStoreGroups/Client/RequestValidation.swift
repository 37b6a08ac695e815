/// The checks every argument passes before a request is built, so a hostile or mistaken id can
/// never change the request's path or query.
package enum RequestValidation {
    /// Longest accepted transaction or group id.
    ///
    /// Apple's ids are decimal strings of about 18 digits; 128 leaves room without accepting
    /// anything unbounded.
    package static let maximumIdentifierLength = 128
    /// Apple documents `limit` as at most 100.
    package static let limitRange = 1...100
    /// A generous bound on Apple's opaque pagination tokens.
    package static let maximumPaginationTokenLength = 4096

    /// Throws unless `value` is 1 to 128 characters of `A-Z a-z 0-9 _ -`.
    package static func checkIdentifier(_ value: String, name: String) throws(AppStoreGroupsError) {
        let bytes = value.utf8
        guard !bytes.isEmpty else { throw invalid("the \(name) is empty") }
        guard bytes.count <= maximumIdentifierLength else {
            throw invalid("the \(name) is longer than \(maximumIdentifierLength) characters")
        }
        guard bytes.allSatisfy(isIdentifierByte) else {
            throw invalid("the \(name) may hold only the characters A-Z a-z 0-9 _ -")
        }
    }

    /// Throws unless `limit` is 1 to 100.
    package static func checkLimit(_ limit: Int?) throws(AppStoreGroupsError) {
        guard let limit else { return }
        guard limitRange.contains(limit) else {
            throw invalid("the limit \(limit) is not between \(limitRange.lowerBound) and \(limitRange.upperBound)")
        }
    }

    /// Throws unless the token is 1 to 4096 characters; it is percent-encoded when sent.
    package static func checkPaginationToken(_ token: String?) throws(AppStoreGroupsError) {
        guard let token else { return }
        guard !token.isEmpty, token.utf8.count <= maximumPaginationTokenLength else {
            throw invalid("the pagination token must be 1 to \(maximumPaginationTokenLength) bytes")
        }
    }

    /// Percent-encodes everything except RFC 3986's unreserved characters.
    package static func percentEncoded(_ value: String) -> String {
        var result = ""
        for byte in value.utf8 {
            if isIdentifierByte(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "~") {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        return result
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    private static func invalid(_ message: String) -> AppStoreGroupsError {
        AppStoreGroupsError(code: .invalidArgument, message: message)
    }
}
