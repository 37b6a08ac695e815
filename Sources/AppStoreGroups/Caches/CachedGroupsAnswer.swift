#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

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

    private static let magic: [UInt8] = Array("GPA1".utf8)

    /// 9999-12-31T23:59:59.999Z in milliseconds since 1970: the latest fetch time read back.
    static let latestMilliseconds: UInt64 = 253_402_300_799_999

    /// The bytes a shared store keeps: a 4-byte tag, the kind, the fetch time in milliseconds
    /// (8 bytes, big-endian), then Apple's body.
    func encoded() -> [UInt8] {
        var bytes = Self.magic
        bytes.reserveCapacity(13 + body.count)
        bytes.append(kind.rawValue)
        let milliseconds = UInt64(bitPattern: fetchedAtMilliseconds)
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: milliseconds >> UInt64(shift)))
        }
        bytes.append(contentsOf: body)
        return bytes
    }

    /// Reads bytes ``encoded()`` made; `nil` for anything else.
    init?(encoded bytes: [UInt8]) {
        guard bytes.count >= 13, Array(bytes[0..<4]) == Self.magic, let kind = Kind(rawValue: bytes[4]) else {
            return nil
        }
        var milliseconds: UInt64 = 0
        for byte in bytes[5..<13] { milliseconds = milliseconds << 8 | UInt64(byte) }
        let body = Array(bytes[13...])
        // A fetch time before 1970 or after 9999 was never written by ``encoded()``.
        guard kind == .groups || body.isEmpty, milliseconds <= Self.latestMilliseconds else { return nil }
        self.init(
            kind: kind,
            body: body,
            fetchedAt: Date(timeIntervalSince1970: Double(Int64(bitPattern: milliseconds)) / 1000)
        )
    }
}
