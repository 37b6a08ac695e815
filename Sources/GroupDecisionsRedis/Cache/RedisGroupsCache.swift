public import AppStoreGroups
public import Foundation
public import GroupDecisions
import GroupPolicy

/// A `SharedGroupsCache` on a Redis server, shared by every process of a fleet.
///
/// It sends its commands through any ``RedisCommandSending`` client: its own connection pool when
/// made with a host and a port, or an app's Redis client
/// (``init(client:keyPrefix:maximumClockSkew:now:)``), with the same keys, scripts and values.
///
/// Its own pool speaks RESP2 over plain TCP with the few commands it needs (`GET`, `MGET`, `SET` with `PX`,
/// `INCR`, `SCAN`, `UNLINK`, `ECHO`, and `EVAL` for the lock, the 429 gate's compare-and-set steps,
/// the fleet's budget, the invalidation count, invalidations and the writes they must win over),
/// and no dependency. Every call, waiting for a connection and connecting included, finishes
/// within ``timeout`` or throws `AppStoreGroupsError.Code.sharedCacheFailure` (or
/// `AppStoreGroupsError.Code.cancelled` when its task is cancelled); the service then carries
/// on with its in-process cache (see `GroupDecisionService.Configuration.fallbackShare` for the budget).
///
/// Each instance keeps up to ``maximumConnections`` connections, opened as calls need them, and a
/// thread of its own that drives them with `poll`: calls never block Swift's cooperative threads,
/// as many run at once as there are connections, and the others queue in order of arrival. A
/// connection runs one call at a time, and each call's replies end with the echo of a value unique
/// to the call, so a reply is only ever taken as the answer to the command that asked for it; a
/// connection that surprises in any way (a timeout, a cancellation, a reply too many, a reply out
/// of place, a protocol error) is closed. A call whose pooled connection turns out dead before any
/// reply byte (after a Redis restart, say) is sent once more on a new connection: every command
/// this store sends has the same effect when run twice. ``close()`` ends it all.
///
/// Values prove where they belong: each answer is written with the key it is kept under (which
/// names the prefix, the environment and the customer) and read back only under that key, and an
/// answer fetched further in the future than ``maximumClockSkew`` is not served. Either is no
/// answer (`nil`): the service fetches the customer again and overwrites the value.
///
/// Keys are `<keyPrefix>:<environment>:groups:<customer>` for answers,
/// `<keyPrefix>:<environment>:lock:<customer>` for fetch locks,
/// `<keyPrefix>:<environment>:generation:<customer>` and `<keyPrefix>:generation-all` for the
/// invalidation counts (see ``invalidationGenerationLifetime``), `<keyPrefix>:invalidations` for
/// the count of every invalidation (``invalidationCount()``, a fresh random value each time) and
/// `<keyPrefix>:<environment>:rate-limited-until:<endpoint>` for the 429 gate, so one Redis can
/// serve several apps: give each its own prefix (its bundle id, say). ``invalidateAll()`` walks the
/// keys with `SCAN` and removes this prefix's answers with `UNLINK` (never the keys of a prefix
/// that extends this one with `:`), so it costs one call per 1,000 keys of the whole database, other
/// apps' keys included (2,000 calls for 2 million keys), and at most 100,000 calls; it is meant for
/// a policy or product change, not for every request. Give the answers a Redis database of their
/// own (or a server) when it shares one with millions of other keys.
///
/// Errors name the server, the command and a reason of this library's own: never a key (which
/// holds a customer id) nor the text of Redis's error replies, only their code word (`ERR`,
/// `WRONGTYPE`, `NOSCRIPT`).
///
/// No authentication or TLS: run Redis on a private network, as its documentation advises.
public final class RedisGroupsCache: SharedGroupsCache {
    /// The server's host name or address; empty for a store over an app's client.
    public let host: String
    /// The server's TCP port; 0 for a store over an app's client.
    public let port: Int
    /// What every key starts with, followed by `:`.
    public let keyPrefix: String
    /// The longest one call may take, waiting for a connection and connecting included; zero for a
    /// store over an app's client, whose calls end when the client says.
    public let timeout: Duration
    /// The most connections open at once: the most calls on the wire at once; 0 for a store over
    /// an app's client.
    public let maximumConnections: Int
    /// How far in the future an answer's fetch time may be and still be served: the clock
    /// difference tolerated between the processes of a fleet.
    public let maximumClockSkew: Duration

    /// The largest value read back: an answer's bytes are bounded by the client's response limit;
    /// anything larger is refused as a store failure rather than read.
    let maximumValueBytes: Int
    let maximumClockSkewSeconds: Double
    let now: @Sendable () -> Date
    /// What sends the commands: the store's own pool, or an app's client.
    ///
    /// A tool or a test that needs a command the store does not send (`DEL` of a key to simulate
    /// an eviction, `FLUSHALL`) sends it here, on the store's own connections, rather than opening
    /// a client of its own.
    public let client: any RedisCommandSending
    /// The pool the store made and closes, when it sends through one of its own.
    private let ownPool: RedisConnectionPool?
    /// How errors name the server: `Redis at host:port`, or `Redis` behind an app's client.
    let server: String

    /// The store's own pool, for the tests that count its connections: only a store made with a
    /// host and a port has one.
    var pool: RedisConnectionPool {
        guard let ownPool else { preconditionFailure("a store over an app's client has no pool of its own") }
        return ownPool
    }

    /// The default of ``maximumConnections``.
    ///
    /// An uncached decision makes five calls in a row, each waiting for its reply, so with `n`
    /// connections and a Redis `t` away, 64 decisions at once need `5 × 64 / n` round trips of
    /// `t` where one needs 5: with 32, twice one decision's time (16 would be four times).
    public static let defaultMaximumConnections = 32

    /// Creates a store; nothing is sent, and no connection or thread exists, until the first call.
    ///
    /// A host name (rather than an address) is resolved on a thread of its own when a connection
    /// is needed, within the calls' timeout, and kept for 30 seconds.
    ///
    /// - Parameters:
    ///   - host: The server's host name or address, such as `127.0.0.1`.
    ///   - port: The server's port, 1 to 65535 (Redis's default is 6379).
    ///   - keyPrefix: What every key starts with: one per app, such as its bundle id. Not empty, and
    ///     not ending in `:Sandbox:groups` or `:Production:groups` (where a shorter prefix keeps its
    ///     answers).
    ///   - timeout: The longest one call may take. Default 250 milliseconds: a Redis on the same
    ///     network answers in about one.
    ///   - maximumConnections: The most connections open at once, 1 to 1,024. Default
    ///     ``defaultMaximumConnections``. Idle connections close after 60 seconds.
    ///   - maximumValueBytes: The largest value read back. Default 2 MiB (twice Apple's largest
    ///     accepted answer).
    ///   - maximumClockSkew: How far in the future an answer's fetch time may be and still be
    ///     served. Default 5 seconds: clocks kept by NTP differ by milliseconds.
    ///   - now: The wall clock, for the 429 gate's expiry and the fetch-time check. Default: the
    ///     system clock.
    /// - Throws: `AppStoreGroupsError.Code.invalidConfiguration` for an empty host or prefix, a
    ///   prefix ending in an environment's `:<Environment>:groups`, a
    ///   port out of range, a timeout that is not positive, a connection count out of range, or a
    ///   negative skew.
    public convenience init(
        host: String,
        port: Int,
        keyPrefix: String,
        timeout: Duration = .milliseconds(250),
        maximumConnections: Int = RedisGroupsCache.defaultMaximumConnections,
        maximumValueBytes: Int = 2 << 20,
        maximumClockSkew: Duration = .seconds(5),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(AppStoreGroupsError) {
        try self.init(
            host: host,
            port: port,
            keyPrefix: keyPrefix,
            timeout: timeout,
            maximumConnections: maximumConnections,
            maximumValueBytes: maximumValueBytes,
            maximumClockSkew: maximumClockSkew,
            now: now,
            idleLifetime: .seconds(60)
        )
    }

    /// Creates a store whose idle connections close after `idleLifetime` (tests that count
    /// connections keep them for as long as a busy machine may pause between two calls).
    package convenience init(
        host: String,
        port: Int,
        keyPrefix: String,
        timeout: Duration,
        maximumConnections: Int,
        maximumValueBytes: Int,
        maximumClockSkew: Duration,
        now: @escaping @Sendable () -> Date,
        idleLifetime: Duration
    ) throws(AppStoreGroupsError) {
        let invalid = Self.invalid
        guard !host.isEmpty else { throw invalid("the host is empty") }
        guard (1...65_535).contains(port) else { throw invalid("port \(port) is not 1 to 65535") }
        try Self.checkKeyPrefix(keyPrefix)
        guard timeout > .zero else { throw invalid("the timeout must be positive") }
        guard (1...1_024).contains(maximumConnections) else {
            throw invalid("the connection count \(maximumConnections) is not 1 to 1024")
        }
        guard maximumValueBytes > 0 else { throw invalid("the value size limit must be positive") }
        guard maximumClockSkew >= .zero else { throw invalid("the clock skew must not be negative") }
        let pool = RedisConnectionPool(
            settings: RedisConnectionPool.Settings(
                host: host,
                port: port,
                maximumConnections: maximumConnections,
                maximumReplyBytes: maximumValueBytes + 64,
                connectTimeout: timeout,
                idleLifetime: idleLifetime
            )
        )
        try self.init(
            client: pool,
            ownPool: pool,
            server: "Redis at \(host):\(port)",
            host: host,
            port: port,
            keyPrefix: keyPrefix,
            timeout: timeout,
            maximumConnections: maximumConnections,
            maximumValueBytes: maximumValueBytes,
            maximumClockSkew: maximumClockSkew,
            now: now
        )
    }

    /// Creates a store that sends its commands through an app's own Redis client, with the keys,
    /// scripts and values of a store made with a host and a port (the two share a server's data).
    ///
    /// The client bounds each call (its timeout) and the size of what it reads; the store makes no
    /// connection and no thread of its own, and ``close()`` leaves the client open. See the DocC
    /// article "Implementing a shared cache" for an adapter.
    ///
    /// - Parameters:
    ///   - client: What sends each command to the server and returns its reply.
    ///   - keyPrefix: What every key starts with (see ``init(host:port:keyPrefix:timeout:maximumConnections:maximumValueBytes:maximumClockSkew:now:)``).
    ///   - maximumClockSkew: How far in the future an answer's fetch time may be and still be
    ///     served. Default 5 seconds.
    ///   - now: The wall clock. Default: the system clock.
    /// - Throws: `AppStoreGroupsError.Code.invalidConfiguration` for an empty prefix, a prefix
    ///   ending in an environment's `:<Environment>:groups`, or a negative skew.
    public convenience init(
        client: some RedisCommandSending,
        keyPrefix: String,
        maximumClockSkew: Duration = .seconds(5),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(AppStoreGroupsError) {
        try self.init(
            client: client,
            ownPool: nil,
            server: "Redis",
            host: "",
            port: 0,
            keyPrefix: keyPrefix,
            timeout: .zero,
            maximumConnections: 0,
            maximumValueBytes: 2 << 20,
            maximumClockSkew: maximumClockSkew,
            now: now
        )
    }

    private init(
        client: any RedisCommandSending,
        ownPool: RedisConnectionPool?,
        server: String,
        host: String,
        port: Int,
        keyPrefix: String,
        timeout: Duration,
        maximumConnections: Int,
        maximumValueBytes: Int,
        maximumClockSkew: Duration,
        now: @escaping @Sendable () -> Date
    ) throws(AppStoreGroupsError) {
        try Self.checkKeyPrefix(keyPrefix)
        guard maximumClockSkew >= .zero else { throw Self.invalid("the clock skew must not be negative") }
        self.client = client
        self.ownPool = ownPool
        self.server = server
        self.host = host
        self.port = port
        self.keyPrefix = keyPrefix
        self.timeout = timeout
        self.maximumConnections = maximumConnections
        self.maximumValueBytes = maximumValueBytes
        self.maximumClockSkew = maximumClockSkew
        maximumClockSkewSeconds = Self.seconds(maximumClockSkew)
        self.now = now
    }

    private static func invalid(_ why: String) -> AppStoreGroupsError {
        AppStoreGroupsError(code: .invalidConfiguration, message: "invalid Redis store: \(why)")
    }

    /// Refuses an empty prefix, and one ending where a shorter prefix keeps its answers.
    private static func checkKeyPrefix(_ keyPrefix: String) throws(AppStoreGroupsError) {
        guard !keyPrefix.isEmpty else { throw invalid("the key prefix is empty") }
        // `<p>:Sandbox:groups` as a prefix would put its own counters (`<p>:Sandbox:groups:invalidations`)
        // where prefix `<p>` keeps its answers, and `<p>`'s invalidateAll() would remove them.
        if let environment = StoreEnvironment.allCases.first(where: { keyPrefix.hasSuffix(":\($0.rawValue):groups") }) {
            throw invalid(
                "the key prefix '\(keyPrefix)' ends in ':\(environment.rawValue):groups', where a shorter prefix "
                    + "keeps its answers"
            )
        }
    }

    deinit {
        ownPool?.close()
    }

    /// Closes every connection and stops the store's thread; calls in flight end at once, and
    /// every later call fails with `AppStoreGroupsError.Code.sharedCacheFailure` without waiting.
    ///
    /// Calling it again does nothing. A store that goes away closes itself. A store over an app's
    /// client leaves the client open: the app closes it.
    public func close() {
        ownPool?.close()
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    // MARK: Keys

    func answerKey(_ customerID: String, _ environment: StoreEnvironment) -> [UInt8] {
        Array("\(keyPrefix):\(environment.rawValue):groups:\(customerID)".utf8)
    }

    func lockKey(_ customerID: String, _ environment: StoreEnvironment) -> [UInt8] {
        Array("\(keyPrefix):\(environment.rawValue):lock:\(customerID)".utf8)
    }

    func generationKey(_ customerID: String, _ environment: StoreEnvironment) -> [UInt8] {
        Array("\(keyPrefix):\(environment.rawValue):generation:\(customerID)".utf8)
    }

    /// The count of ``invalidateAll()`` calls, in every environment.
    var allGenerationKey: [UInt8] { Array("\(keyPrefix):generation-all".utf8) }

    /// The count of ``invalidate(groupID:)`` calls, for every group and environment.
    var groupCountKey: [UInt8] { Array("\(keyPrefix):group-count".utf8) }

    /// The count of every invalidation (``invalidationCount()``), kept without expiry.
    var invalidationCountKey: [UInt8] { Array("\(keyPrefix):invalidations".utf8) }

    func rateKey(_ endpoint: GroupsEndpoint, _ environment: StoreEnvironment) -> [UInt8] {
        Array("\(keyPrefix):\(environment.rawValue):rate-limited-until:\(endpoint.name)".utf8)
    }

    /// A `SCAN MATCH` pattern for every answer key under the prefix, the prefix's glob characters
    /// escaped.
    var answerPattern: [UInt8] {
        var escaped = ""
        for character in keyPrefix {
            if "*?[]\\".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return Array("\(escaped):*:groups:*".utf8)
    }

    /// Whether `key` is one of this prefix's answer keys, `<prefix>:<environment>:groups:<customer>`
    /// exactly: an environment the store writes and a customer id, which holds no `:`.
    func isAnswerKey(_ key: [UInt8]) -> Bool {
        StoreEnvironment.allCases.contains { environment in
            let head = Array("\(keyPrefix):\(environment.rawValue):groups:".utf8)
            return key.count > head.count && key.starts(with: head) && !key[head.count...].contains(UInt8(ascii: ":"))
        }
    }

    /// The longest time to live or wait sent to Redis: 1,000 years of 365 days, in milliseconds.
    ///
    /// Redis refuses an expiry whose instant overflows its clock in milliseconds (`PX` near
    /// `Int64.max` is `ERR invalid expire time`), and its scripts count in doubles, exact only up to
    /// 2^53 (about 285,000 years). Every duration is cut to this, so a longer one is kept 1,000 years.
    static let maximumMilliseconds: Int64 = 1_000 * 365 * 86_400 * 1_000

    /// `duration` in whole milliseconds, at least 1 and at most ``maximumMilliseconds``: never a
    /// value that overflows, traps or that Redis refuses.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 1 }
        guard seconds < maximumMilliseconds / 1_000 else { return maximumMilliseconds }
        return min(maximumMilliseconds, max(1, seconds * 1_000 + attoseconds / 1_000_000_000_000_000))
    }

    // MARK: Calls

    /// A store failure for a reply of the wrong kind, naming the command and the kind of reply:
    /// never its text, which may quote a key (an unknown-command error quotes the arguments).
    func unexpected(_ reply: RESPReply, _ label: String) -> AppStoreGroupsError {
        let what =
            switch reply {
            case .error(let message): "the server answered with an error (\(Self.errorCode(message)))"
            case .simple: "an unexpected status reply"
            case .integer: "an unexpected integer"
            case .bulk(let value): value == nil ? "an unexpected null" : "an unexpected value"
            case .array(let value): value == nil ? "an unexpected null array" : "an unexpected array"
            }
        return AppStoreGroupsError(code: .sharedCacheFailure, message: "\(server): \(label): \(what)")
    }

    /// The code word an error reply starts with (`ERR`, `WRONGTYPE`, `NOSCRIPT`), or `unknown`
    /// when it does not start with one: capitals only, so it cannot carry a customer id.
    static func errorCode(_ message: String) -> String {
        let word = message.utf8.prefix { $0 != UInt8(ascii: " ") }
        guard (1...32).contains(word.count), word.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) })
        else { return "unknown" }
        return String(decoding: word, as: UTF8.self)
    }

    /// Sends one command through the client and returns its reply.
    ///
    /// - Parameters:
    ///   - arguments: The command and its arguments.
    ///   - label: What errors call it: the command and its purpose, never a key.
    ///   - isIdempotent: Whether running it twice has the effect of running it once (every command
    ///     this store sends but the budget's): only then may the client send it again after a
    ///     connection died with it possibly delivered.
    /// - Returns: The reply.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure`, or `AppStoreGroupsError.Code.cancelled`:
    ///   the client's own `AppStoreGroupsError` as it is, any other error named by its type only.
    func call(
        _ arguments: [[UInt8]],
        _ label: String,
        isIdempotent: Bool = true
    ) async throws(AppStoreGroupsError) -> RESPReply {
        do {
            return try await client.send(RedisCommand(arguments, label: label, isIdempotent: isIdempotent))
        } catch let error as AppStoreGroupsError {
            throw error
        } catch is CancellationError {
            throw AppStoreGroupsError(code: .cancelled, message: "\(server): \(label): cancelled")
        } catch {
            // Only the type: a client's error text may quote the command, and so a key.
            throw AppStoreGroupsError(
                code: .sharedCacheFailure,
                message: "\(server): \(label): the client failed (\(type(of: error)))"
            )
        }
    }
}
