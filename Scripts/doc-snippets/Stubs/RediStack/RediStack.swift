// swift-format-ignore-file
// A stub of RediStack 1.x for Scripts/check-doc-snippets: only what the DocC snippets use, with
// RediStack's signatures. Nothing here runs.
public import NIOCore

/// RediStack's RESP value.
public enum RESPValue: Sendable {
    case null
    case simpleString(ByteBuffer)
    case bulkString(ByteBuffer?)
    case error(RedisError)
    case integer(Int)
    case array([RESPValue])

    /// RediStack's `init(bulk:)` for bytes.
    public init<Value: Collection>(bulk: Value) where Value.Element == UInt8 { self = .null }
}

/// RediStack's error reply.
public struct RedisError: Error, Sendable {
    public let message: String
}

/// RediStack's client protocol (a connection, a pool, `Application.redis` in Vapor).
public protocol RedisClient: Sendable {
    func send(command: String, with arguments: [RESPValue]) -> EventLoopFuture<RESPValue>
}
