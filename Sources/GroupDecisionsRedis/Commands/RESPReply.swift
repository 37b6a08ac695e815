/// A reply from Redis, as RESP2 carries it: what ``RedisCommandSending/send(_:)`` returns.
public enum RESPReply: Sendable, Hashable {
    /// A status reply, such as `OK`.
    case simple(String)
    /// An error reply, such as `ERR unknown command`; the store reads only its first word.
    case error(String)
    /// An integer reply.
    case integer(Int64)
    /// A bulk string; `nil` for the null bulk string (and for RESP3's null).
    case bulk([UInt8]?)
    /// An array; `nil` for the null array.
    case array([RESPReply]?)
}
