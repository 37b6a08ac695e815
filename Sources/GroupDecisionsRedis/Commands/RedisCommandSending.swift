/// Sends a ``RedisGroupsCache``'s commands to Redis and returns the replies: the one thing the
/// store needs of a Redis client.
///
/// The store keeps its keys, its Lua scripts and its value encoding whatever sends them, so an app
/// that already has a Redis client (RediStack, valkey-swift, its own) runs no second connection
/// pool: it wraps its client in a conformance of a few lines and passes it to
/// ``RedisGroupsCache/init(client:keyPrefix:maximumClockSkew:now:)``. The DocC
/// article "Implementing a shared cache" shows one. A store made with a host and a port sends
/// through a connection pool of its own.
///
/// A conformance sends each command as it is, to one server (or a primary: the scripts need a
/// server that writes), and returns the server's reply, an error reply included: the store reads
/// it. It keeps the command's own timeout, or its client's.
public protocol RedisCommandSending: Sendable {
    /// Sends one command and returns the server's reply to it.
    ///
    /// - Parameter command: The command's name and arguments, as bytes, with the label the store's
    ///   errors call it by and whether sending it twice does what sending it once does.
    /// - Returns: The reply, an error reply (``RESPReply/error(_:)``) included.
    /// - Throws: When no reply came (a timeout, a connection lost). The store turns any error into
    ///   `AppStoreGroupsError.Code.sharedCacheFailure`, naming the command's label and the
    ///   error's type but never its text (which may quote a key); a `CancellationError` becomes
    ///   `AppStoreGroupsError.Code.cancelled`, and an `AppStoreGroupsError` is thrown unchanged.
    func send(_ command: RedisCommand) async throws -> RESPReply
}

/// One command a ``RedisGroupsCache`` sends: its arguments, the label its errors call it by, and
/// whether it may be sent again.
public struct RedisCommand: Sendable, Hashable {
    /// The command's name, then its arguments, each as the bytes Redis receives.
    public var arguments: [[UInt8]]
    /// What errors call the command: its name and purpose, such as `GET answer`, never a key (which
    /// holds a customer id).
    public var label: String
    /// Whether running the command twice has the effect of running it once, so that a client may
    /// send it again after a connection dropped before any reply came.
    public var isIdempotent: Bool

    /// A command.
    ///
    /// - Parameters:
    ///   - arguments: The command's name, then its arguments.
    ///   - label: What errors call it, never a key.
    ///   - isIdempotent: Whether it may be sent twice. Default `true`.
    public init(_ arguments: [[UInt8]], label: String, isIdempotent: Bool = true) {
        self.arguments = arguments
        self.label = label
        self.isIdempotent = isIdempotent
    }
}
