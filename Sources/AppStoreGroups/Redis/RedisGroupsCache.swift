import Dispatch
public import GroupPolicy

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A ``SharedGroupsCache`` on a Redis server, shared by every process of a fleet.
///
/// It speaks RESP2 over plain TCP with the few commands it needs (`GET`, `SET` with `PX` and `NX`,
/// `DEL`, `SCAN`, `UNLINK`, and `EVAL` for the two compare-and-set steps), and no dependency. Every
/// call, connecting included, finishes within ``timeout`` or throws
/// ``AppStoreGroupsError/Code/storeFailure``; the service then carries on with its in-process
/// cache and budget. Calls run on Dispatch's threads, never blocking Swift's cooperative pool.
///
/// Connections are kept in a small pool (``maximumIdleConnections``): one call uses one connection
/// at a time, a connection is closed after any failure (so a late reply can never answer the next
/// command), and a call that finds the pool empty opens a new one.
///
/// Keys are `<keyPrefix>:<environment>:groups:<customer>` for answers,
/// `<keyPrefix>:<environment>:lock:<customer>` for fetch locks and
/// `<keyPrefix>:<environment>:rate-limited-until:<endpoint>` for the 429 gate, so one Redis can
/// serve several apps: give each its own prefix (its bundle id, say). ``invalidateAll()`` walks the
/// answer keys with `SCAN` and removes them with `UNLINK`, so it costs time in proportion to the
/// keys under the prefix; it is meant for a policy or product change, not for every request.
///
/// No authentication or TLS: run Redis on a private network, as its documentation advises.
public final class RedisGroupsCache: SharedGroupsCache {
    /// The server's host name or address.
    public let host: String
    /// The server's TCP port.
    public let port: Int
    /// What every key starts with, followed by `:`.
    public let keyPrefix: String
    /// The longest one call may take, connecting included.
    public let timeout: Duration
    /// The most idle connections kept open for later calls.
    public let maximumIdleConnections: Int

    /// The largest value read back: an answer's bytes are bounded by the client's response limit;
    /// anything larger is refused as a store failure rather than read.
    let maximumValueBytes: Int
    private let idle = Locked<[RedisConnection]>([])
    private let now: @Sendable () -> Date
    /// The threads Redis calls block on, taken in turn.
    ///
    /// Serial queues, each with a thread of its own: a concurrent queue draws on Dispatch's shared
    /// pool, as wide as the machine has cores, which other blocking work in the process (a test
    /// run, an app's own) can fill, delaying every call past its deadline.
    private static let queues = (0..<4).map { DispatchQueue(label: "RedisGroupsCache.\($0)") }
    private static let nextQueue = Locked(0)

    /// Creates a store; nothing is sent until the first call.
    ///
    /// Host names are resolved with the system resolver on each new connection, outside the
    /// timeout: give an address, or a name from `/etc/hosts` or a local resolver.
    ///
    /// - Parameters:
    ///   - host: The server's host name or address, such as `127.0.0.1`.
    ///   - port: The server's port, 1 to 65535 (Redis's default is 6379).
    ///   - keyPrefix: What every key starts with: one per app, such as its bundle id. Not empty.
    ///   - timeout: The longest one call may take. Default 250 milliseconds: a Redis on the same
    ///     network answers in about one.
    ///   - maximumIdleConnections: The most idle connections kept open. Default 8.
    ///   - maximumValueBytes: The largest value read back. Default 2 MiB (twice Apple's largest
    ///     accepted answer).
    ///   - now: The wall clock, for the 429 gate's expiry. Default: the system clock.
    /// - Throws: ``AppStoreGroupsError/Code/invalidConfiguration`` for an empty host or prefix, a
    ///   port out of range or a timeout that is not positive.
    public init(
        host: String,
        port: Int,
        keyPrefix: String,
        timeout: Duration = .milliseconds(250),
        maximumIdleConnections: Int = 8,
        maximumValueBytes: Int = 2 << 20,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(AppStoreGroupsError) {
        func invalid(_ why: String) -> AppStoreGroupsError {
            AppStoreGroupsError(code: .invalidConfiguration, message: "invalid Redis store: \(why)")
        }
        guard !host.isEmpty else { throw invalid("the host is empty") }
        guard (1...65_535).contains(port) else { throw invalid("port \(port) is not 1 to 65535") }
        guard !keyPrefix.isEmpty else { throw invalid("the key prefix is empty") }
        guard timeout > .zero else { throw invalid("the timeout must be positive") }
        guard maximumValueBytes > 0 else { throw invalid("the value size limit must be positive") }
        self.host = host
        self.port = port
        self.keyPrefix = keyPrefix
        self.timeout = timeout
        self.maximumIdleConnections = max(0, maximumIdleConnections)
        self.maximumValueBytes = maximumValueBytes
        self.now = now
    }

    // MARK: Keys

    func answerKey(_ customerID: String, _ environment: StoreEnvironment) -> [UInt8] {
        Array("\(keyPrefix):\(environment.rawValue):groups:\(customerID)".utf8)
    }

    func lockKey(_ customerID: String, _ environment: StoreEnvironment) -> [UInt8] {
        Array("\(keyPrefix):\(environment.rawValue):lock:\(customerID)".utf8)
    }

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

    private static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    // MARK: SharedGroupsCache

    /// The answer kept for a customer, or `nil` when there is none, it has expired, or the value
    /// under its key is not one this store wrote.
    ///
    /// - Parameters:
    ///   - customerID: The id the customer's decisions are asked with.
    ///   - environment: The environment the answer stands for.
    /// - Returns: The answer, or `nil`.
    /// - Throws: ``AppStoreGroupsError/Code/storeFailure``.
    public func answer(
        forCustomer customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> CachedGroupsAnswer? {
        let key = answerKey(customerID, environment)
        switch try await call([Array("GET".utf8), key]) {
        case .bulk(let value?): return CachedGroupsAnswer(encoded: value)
        case .bulk(nil): return nil
        case let other: throw unexpected(other, "GET")
        }
    }

    /// Keeps an answer for a customer for `timeToLive` (`SET key value PX ms`).
    ///
    /// - Parameters:
    ///   - answer: Apple's answer and when it was fetched.
    ///   - customerID: The id the customer's decisions are asked with.
    ///   - environment: The environment the answer stands for.
    ///   - timeToLive: How long Redis keeps it.
    /// - Throws: ``AppStoreGroupsError/Code/storeFailure``.
    public func setAnswer(
        _ answer: CachedGroupsAnswer,
        forCustomer customerID: String,
        in environment: StoreEnvironment,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) {
        let arguments = [
            Array("SET".utf8), answerKey(customerID, environment), answer.encoded(),
            Array("PX".utf8), Array(String(Self.milliseconds(timeToLive)).utf8),
        ]
        switch try await call(arguments) {
        case .simple("OK"): return
        case let other: throw unexpected(other, "SET")
        }
    }

    /// Takes the customer's fetch lock (`SET key owner NX PX ms`).
    ///
    /// - Parameters:
    ///   - customerID: The customer about to be fetched.
    ///   - environment: The environment of the fetch.
    ///   - owner: A value unique to this attempt.
    ///   - timeToLive: When Redis drops the lock if it is not released.
    /// - Returns: Whether this caller now holds the lock.
    /// - Throws: ``AppStoreGroupsError/Code/storeFailure``.
    public func acquireFetchLock(
        forCustomer customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> Bool {
        let arguments = [
            Array("SET".utf8), lockKey(customerID, environment), Array(owner.utf8),
            Array("NX".utf8), Array("PX".utf8), Array(String(Self.milliseconds(timeToLive)).utf8),
        ]
        switch try await call(arguments) {
        case .simple("OK"): return true
        case .bulk(nil): return false
        case let other: throw unexpected(other, "SET NX")
        }
    }

    private static let releaseScript = Array(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end".utf8
    )

    /// Releases the customer's fetch lock if `owner` still holds it (compare and delete, in one
    /// script).
    ///
    /// - Parameters:
    ///   - customerID: The customer whose lock to release.
    ///   - environment: The environment of the fetch.
    ///   - owner: The value the lock was taken with.
    /// - Throws: ``AppStoreGroupsError/Code/storeFailure``.
    public func releaseFetchLock(
        forCustomer customerID: String,
        in environment: StoreEnvironment,
        owner: String
    ) async throws(AppStoreGroupsError) {
        let arguments = [
            Array("EVAL".utf8), Self.releaseScript, Array("1".utf8), lockKey(customerID, environment),
            Array(owner.utf8),
        ]
        switch try await call(arguments) {
        case .integer: return
        case let other: throw unexpected(other, "EVAL")
        }
    }

    /// The instant before which no request may go to the endpoint, or `nil`.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - environment: The environment.
    /// - Returns: The instant, or `nil` when none is set or it has passed.
    /// - Throws: ``AppStoreGroupsError/Code/storeFailure``.
    public func rateLimitedUntil(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> Date? {
        switch try await call([Array("GET".utf8), rateKey(endpoint, environment)]) {
        case .bulk(nil):
            return nil
        case .bulk(let value?):
            // Only what `setRateLimitedUntil` writes: whole milliseconds of a `Retry-After` the
            // client accepts (at most 15 digits), so the instant converts back without overflow.
            guard let milliseconds = Int64(String(decoding: value, as: UTF8.self)),
                (0...999_999_999_999_999).contains(milliseconds)
            else {
                throw AppStoreGroupsError(
                    code: .storeFailure,
                    message: "Redis at \(host):\(port): the rate-limit instant is not a number of milliseconds"
                )
            }
            let instant = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            return instant > now() ? instant : nil
        case let other:
            throw unexpected(other, "GET")
        }
    }

    private static let raiseScript = Array(
        """
        local known = tonumber(redis.call('GET', KEYS[1]))
        if known and known >= tonumber(ARGV[1]) then return 0 end
        redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
        return 1
        """.utf8
    )

    /// Records that no request may go to the endpoint before `instant`, unless a later instant is
    /// already recorded (compare and set, in one script); Redis drops the key at the instant.
    ///
    /// - Parameters:
    ///   - instant: The `Retry-After` instant.
    ///   - endpoint: The endpoint that answered 429.
    ///   - environment: The environment it answered for.
    /// - Throws: ``AppStoreGroupsError/Code/storeFailure``.
    public func setRateLimitedUntil(
        _ instant: Date,
        for endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) {
        let instantMilliseconds = Int64((instant.timeIntervalSince1970 * 1000).rounded(.up))
        let left = instantMilliseconds - Int64((now().timeIntervalSince1970 * 1000).rounded(.down))
        guard left > 0 else { return }
        let arguments = [
            Array("EVAL".utf8), Self.raiseScript, Array("1".utf8), rateKey(endpoint, environment),
            Array(String(instantMilliseconds).utf8), Array(String(left).utf8),
        ]
        switch try await call(arguments) {
        case .integer: return
        case let other: throw unexpected(other, "EVAL")
        }
    }

    /// Forgets the answers kept for a customer, in every environment (`DEL`).
    ///
    /// - Parameter customerID: The id the customer's decisions are asked with.
    /// - Throws: ``AppStoreGroupsError/Code/storeFailure``.
    public func invalidate(customer customerID: String) async throws(AppStoreGroupsError) {
        let keys = StoreEnvironment.allCases.map { answerKey(customerID, $0) }
        switch try await call([Array("DEL".utf8)] + keys) {
        case .integer: return
        case let other: throw unexpected(other, "DEL")
        }
    }

    /// The most `SCAN` calls one ``invalidateAll()`` makes: 100 million key slots at 1,000 a
    /// call, far more than a store of answers holds.
    static let maximumScanCalls = 100_000

    /// Forgets every answer under the prefix (`SCAN` then `UNLINK`, a batch at a time).
    ///
    /// Answers written while it runs may survive; each call of it has its own timeout, and a walk
    /// longer than 100,000 `SCAN` calls (a server whose cursor never returns to 0) fails.
    ///
    /// - Throws: ``AppStoreGroupsError/Code/storeFailure``.
    public func invalidateAll() async throws(AppStoreGroupsError) {
        var cursor: [UInt8] = Array("0".utf8)
        var calls = 0
        repeat {
            // A server whose cursor never comes back to 0 must not keep this loop going forever.
            calls += 1
            guard calls <= Self.maximumScanCalls else {
                throw AppStoreGroupsError(
                    code: .storeFailure,
                    message: "Redis at \(host):\(port): SCAN did not finish within \(Self.maximumScanCalls) calls"
                )
            }
            let reply = try await call([
                Array("SCAN".utf8), cursor, Array("MATCH".utf8), answerPattern, Array("COUNT".utf8),
                Array("1000".utf8),
            ])
            guard case .array(let parts?) = reply, parts.count == 2, case .bulk(let next?) = parts[0],
                case .array(let keys?) = parts[1]
            else { throw unexpected(reply, "SCAN") }
            var batch: [[UInt8]] = []
            for key in keys {
                guard case .bulk(let name?) = key else { throw unexpected(reply, "SCAN") }
                batch.append(name)
            }
            if !batch.isEmpty {
                let removed = try await call([Array("UNLINK".utf8)] + batch)
                guard case .integer = removed else { throw unexpected(removed, "UNLINK") }
            }
            cursor = next
        } while cursor != Array("0".utf8)
    }

    // MARK: Calls

    private func unexpected(_ reply: RESPReply, _ command: String) -> AppStoreGroupsError {
        let what: String
        switch reply {
        case .error(let message): what = "an error: \(message.prefix(200))"
        case .simple(let text): what = "+\(text.prefix(50))"
        case .integer(let value): what = "the integer \(value)"
        case .bulk(let value): what = value == nil ? "a null value" : "a value"
        case .array(let value): what = value == nil ? "a null array" : "an array"
        }
        return AppStoreGroupsError(
            code: .storeFailure,
            message: "Redis at \(host):\(port) answered \(command) with \(what)"
        )
    }

    /// Sends one command on a pooled or new connection and returns the reply, within ``timeout``.
    func call(_ arguments: [[UInt8]]) async throws(AppStoreGroupsError) -> RESPReply {
        let deadline = ContinuousClock.now + timeout
        let result: Result<RESPReply, RedisFailure> = await withCheckedContinuation { continuation in
            let queue = Self.nextQueue.withLock { next in
                defer { next = (next + 1) % Self.queues.count }
                return Self.queues[next]
            }
            queue.async {
                continuation.resume(returning: self.callBlocking(arguments, deadline: deadline))
            }
        }
        switch result {
        case .success(let reply):
            return reply
        case .failure(let failure):
            throw AppStoreGroupsError(
                code: .storeFailure,
                message: "Redis at \(host):\(port): \(failure.message)"
            )
        }
    }

    private func callBlocking(
        _ arguments: [[UInt8]],
        deadline: ContinuousClock.Instant
    ) -> Result<
        RESPReply, RedisFailure
    > {
        do {
            let connection: RedisConnection
            if let pooled = idle.withLock({ $0.popLast() }) {
                connection = pooled
            } else {
                connection = try RedisConnection(
                    host: host,
                    port: port,
                    timeout: ContinuousClock.now.duration(to: deadline),
                    maximumValueBytes: maximumValueBytes + 64
                )
            }
            let reply = try connection.send(arguments, deadline: deadline)
            if connection.isClean {
                idle.withLock { connections in
                    if connections.count < maximumIdleConnections { connections.append(connection) }
                }
            }
            return .success(reply)
        } catch {
            return .failure(error)
        }
    }
}
