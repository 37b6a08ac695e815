import Foundation

/// Apple's `Retry-After` header: the one reader of it, for the client's retries and, through the
/// errors the client throws, for the decision service's rate-limit gate.
enum RetryAfter {
    /// The instant a `Retry-After` value names: Apple sends a UNIX time in milliseconds.
    ///
    /// Anything else (seconds, an HTTP date, a number before September 2001, more than 15 digits,
    /// text) is not trusted and reads as `nil`; spaces around the number are allowed.
    static func instant(_ value: String) -> Date? {
        let digits = value.utf8.drop { $0 == UInt8(ascii: " ") }.prefix { $0 != UInt8(ascii: " ") }
        guard !digits.isEmpty, digits.count <= 15, digits.allSatisfy({ (0x30...0x39).contains($0) }),
            value.utf8.filter({ $0 != UInt8(ascii: " ") }).count == digits.count,
            let milliseconds = Int64(String(decoding: digits, as: UTF8.self)),
            milliseconds >= 1_000_000_000_000
        else { return nil }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
