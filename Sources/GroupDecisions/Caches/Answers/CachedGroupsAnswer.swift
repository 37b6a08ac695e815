import AppStoreGroups
public import Foundation

/// Apple's answer to Get Customer Groups for one customer, as a groups store keeps it.
///
/// A store holds Apple's bytes and when they were fetched, never a decision: decisions are made
/// from these bytes with whatever policy serves at the time, so a policy reload applies at once to
/// every cached customer. A ``Kind/notFound`` answer (Apple's `TransactionIdNotFoundError`) is kept too,
/// for the shorter negative time to live.
public struct CachedGroupsAnswer: Sendable, Hashable {
    /// What Apple answered.
    public enum Kind: UInt8, Sendable, Hashable {
        /// A 200 answer whose body is ``CachedGroupsAnswer/body``.
        case groups = 0
        /// A 404 `TransactionIdNotFoundError`: Apple knows no such transaction.
        case notFound = 1
    }

    /// What Apple answered.
    public var kind: Kind
    /// The body of Apple's 200 answer, byte for byte; empty for ``Kind/notFound``.
    public var body: [UInt8]
    /// When the answer was received.
    public var fetchedAt: Date

    /// Creates an answer.
    ///
    /// - Parameters:
    ///   - kind: What Apple answered.
    ///   - body: The 200 answer's body; empty for ``Kind/notFound``.
    ///   - fetchedAt: When the answer was received.
    public init(kind: Kind, body: [UInt8], fetchedAt: Date) {
        self.kind = kind
        self.body = body
        self.fetchedAt = fetchedAt
    }

    /// When the answer was fetched, in whole milliseconds since 1970: the resolution stores keep.
    var fetchedAtMilliseconds: Int64 {
        Int64((fetchedAt.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The tag of the layout below; values written under another tag (an earlier layout without
    /// the key) are not answers.
    private static let magic: [UInt8] = Array("GPA2".utf8)

    /// The bytes before the key: the tag, the kind, the fetch time and the key's length.
    private static let headerLength = 17

    /// 9999-12-31T23:59:59.999Z in milliseconds since 1970: the latest fetch time read back.
    static let latestMilliseconds: UInt64 = 253_402_300_799_999

    /// The bytes a shared cache keeps: a 4-byte tag, the kind, the fetch time in milliseconds
    /// (8 bytes, big-endian), the length of the key the value is kept under (4 bytes, big-endian),
    /// that key, then Apple's body.
    ///
    /// The key names the app's prefix, the environment and the customer, so a value copied to
    /// another customer's or environment's key does not read back there (see ``init(encoded:boundTo:)``).
    ///
    /// - Parameter key: The store's key for the value; empty for a value kept under no key.
    /// - Returns: The value to store.
    public func encoded(boundTo key: [UInt8] = []) -> [UInt8] {
        var bytes = Self.magic
        bytes.reserveCapacity(Self.headerLength + key.count + body.count)
        bytes.append(kind.rawValue)
        Self.appendBigEndian(UInt64(bitPattern: fetchedAtMilliseconds), byteCount: 8, to: &bytes)
        Self.appendBigEndian(UInt64(key.count), byteCount: 4, to: &bytes)
        bytes.append(contentsOf: key)
        bytes.append(contentsOf: body)
        return bytes
    }

    /// Reads bytes ``encoded(boundTo:)`` made for `key`; `nil` for anything else, a value made for
    /// another key included.
    ///
    /// - Parameters:
    ///   - bytes: The value as the store kept it.
    ///   - key: The key it was read from; empty for a value kept under no key.
    public init?(encoded bytes: [UInt8], boundTo key: [UInt8] = []) {
        let bodyStart = Self.headerLength + key.count
        guard bytes.count >= bodyStart, Array(bytes[0..<4]) == Self.magic, let kind = Kind(rawValue: bytes[4]) else {
            return nil
        }
        let milliseconds = Self.bigEndian(bytes[5..<13])
        guard Self.bigEndian(bytes[13..<17]) == UInt64(key.count), bytes[17..<bodyStart].elementsEqual(key) else {
            return nil
        }
        let body = Array(bytes[bodyStart...])
        // A fetch time before 1970 or after 9999 was never written by ``encoded(boundTo:)``.
        guard kind == .groups || body.isEmpty, milliseconds <= Self.latestMilliseconds else { return nil }
        self.init(
            kind: kind,
            body: body,
            fetchedAt: Date(timeIntervalSince1970: Double(Int64(bitPattern: milliseconds)) / 1000)
        )
    }

    private static func appendBigEndian(_ value: UInt64, byteCount: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (byteCount - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    private static func bigEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
