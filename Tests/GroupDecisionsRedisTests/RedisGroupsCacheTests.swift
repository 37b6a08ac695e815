import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// The Redis store against a real `redis-server` on 127.0.0.1, shared by the processes of a fleet, and its failures
/// against servers that never answer, refuse or disable commands: errors reach logs and HTTP bodies, so they name the
/// server, the command and a reason of the library's own, never a key (it holds a customer id) nor Redis's own text.
@Suite("Redis store: answers, locks, 429 instants and invalidations shared through Redis, failures named without a key")
struct RedisGroupsCacheTests {
    /// The single-call lock, which the conformance suite does not call (only the owner releasing a lock, the release
    /// being the same script, is its), and the time to live in Redis of an answer and of a 429 instant (the suite asks
    /// only that an answer is gone within seconds of a short one; an instant seen by another instance, only moving
    /// later, per endpoint and environment, is its too).
    @Test(
        "a fetch lock taken alone, an answer and a 429 instant live their time to live in Redis; the lock is taken again by its owner only, and lapses when its holder dies; an instant already past sets nothing",
        .requires(.redisServer)
    )
    func lifetimes() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let holder = try server.store()
        let other = try server.store()
        func lock(_ store: RedisGroupsCache, _ customer: String, _ owner: String, _ life: Duration) async throws -> Bool
        {
            try await store.acquireFetchLock(anyTransactionID: customer, in: .sandbox, owner: owner, timeToLive: life)
        }
        #expect(try await lock(holder, "c", "h", .seconds(600)))
        let left = try await holder.millisecondsToLive(holder.lockKey("c", .sandbox))
        #expect(left.map { (1...600_000).contains($0) } == true)
        let answer = CachedGroupsAnswer(kind: .groups, body: Array(Families.memberBody.utf8), fetchedAt: Date())
        try await holder.setAnswer(answer, anyTransactionID: "c", in: .sandbox, timeToLive: .seconds(600))
        let answerLeft = try await holder.millisecondsToLive(holder.answerKey("c", .sandbox))
        #expect(answerLeft.map { (1...600_000).contains($0) } == true)
        // Taken again by its owner (a command sent twice after a lost connection): still held.
        #expect(try await lock(holder, "c", "h", .seconds(600)))
        #expect(try await lock(other, "c", "o", .seconds(5)) == false)
        // A holder that never releases (it died): its lock lapses by itself.
        #expect(try await lock(holder, "d", "h", .milliseconds(100)))
        try await waitUntil { try await lock(other, "d", "o", .seconds(600)) }
        let instant = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 600).rounded(.down))
        try await holder.setRateLimitedUntil(instant, for: .customerGroups, in: .sandbox)
        // Redis drops the key at the instant.
        let instantLeft = try await holder.millisecondsToLive(holder.rateKey(.customerGroups, .sandbox))
        #expect(instantLeft.map { (1...600_000).contains($0) } == true)
        // An instant already past sets nothing; a near one lapses in Redis.
        try await holder.setRateLimitedUntil(Date().addingTimeInterval(-1), for: .groupMembers, in: .production)
        #expect(try await holder.millisecondsToLive(holder.rateKey(.groupMembers, .production)) == -2)
        try await holder.setRateLimitedUntil(Date().addingTimeInterval(0.2), for: .groupMembers, in: .sandbox)
        try await waitUntil {
            try await holder.millisecondsToLive(holder.rateKey(.groupMembers, .sandbox)) == -2
        }
        #expect(try await other.rateLimitedUntil(.groupMembers, in: .sandbox) == nil)
    }

    @Test(
        "invalidating everyone removes every answer under the prefix, past SCAN's pages, never a nested prefix's nor a 429 instant",
        .requires(.redisServer)
    )
    func invalidation() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store(prefix: "app*[1]")
        let neighbour = try server.store(prefix: "app")
        let answer = SharedGroupsCacheConformance.answer("g1")
        for index in 0..<2_500 {
            try await store.setAnswer(answer, anyTransactionID: "c\(index)", in: .sandbox, timeToLive: .seconds(3600))
        }
        try await neighbour.setAnswer(answer, anyTransactionID: "c1", in: .sandbox, timeToLive: .seconds(3600))
        // Prefixes that extend this one with ':', whose keys the SCAN pattern `app*[1]:*:groups:*` matches.
        let nested = try ["x", "sandbox", "sandbox:groups", "production:groups:y"].map {
            try server.store(prefix: "app*[1]:\($0)")
        }
        for cache in nested {
            try await cache.setAnswer(answer, anyTransactionID: "c1", in: .sandbox, timeToLive: .seconds(3600))
        }
        try await store.setRateLimitedUntil(Date().addingTimeInterval(3600), for: .customerGroups, in: .sandbox)
        try await store.invalidateAll()
        for index in [1, 1_000, 2_499] {
            #expect(try await store.answer(anyTransactionID: "c\(index)", in: .sandbox) == nil)
        }
        #expect(try await neighbour.answer(anyTransactionID: "c1", in: .sandbox) == answer)
        for cache in nested { #expect(try await cache.answer(anyTransactionID: "c1", in: .sandbox) == answer) }
        #expect(try await store.rateLimitedUntil(.customerGroups, in: .sandbox) != nil)
    }

    @Test(
        "services sharing Redis: four asking at once send one request, the others served what Redis holds, and a 429 holds every one back",
        .requires(.redisServer)
    )
    func servicesShareRedis() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        // An hour: under a load of 29 on two cores, a minute passed between the 429 and the next call.
        let retryAfter = Date().addingTimeInterval(3600)
        let stub = StubGroupsSource(
            delay: .milliseconds(300),
            responder: { id, _ in
                id == "limited" ? StubGroupsSource.tooManyRequests(until: retryAfter) : StubGroupsSource.consumerGroup
            }
        )
        // The waiters wait, and the holder holds the lock, long enough for a loaded machine: with
        // the default two seconds' wait, and later with the default ten seconds' lock, a full
        // parallel test run under two busy loops outlasted them and more requests went out. Under a
        // load of 20 a store call took more than 10 s: the store must not time out here either.
        let services = try (0..<4).map { _ in
            try fleetService(stub, server.store(timeout: .seconds(120))) {
                $0.sharedCache.fetchLockWait = .seconds(60)
                $0.sharedCache.fetchLockTimeToLive = .seconds(90)
                $0.rateLimits.maximumRateLimitWait = .zero
            }
        }
        let served = try await withThrowingTaskGroup(of: ServedDecision.self) { group in
            for service in services {
                group.addTask { try await service.decide("c1") }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(stub.requests == ["c1"])
        #expect(served.filter { $0.source == .live }.count == 1)
        #expect(served.filter { $0.source == .cache }.count == 3)
        #expect(served.allSatisfy { $0.decision.allows("family.space") })
        #expect(await expectError { try await services[0].decide("limited") }?.httpStatus == 429)
        let held = await expectError { try await services[1].decide("c2") }
        #expect(held?.code == .rateLimitExceeded)
        #expect(held?.httpStatus == nil)
        #expect(stub.requests == ["c1", "limited"])
    }

    @Test("a server that accepts and never answers: every call fails within its timeout")
    func silentServer() async throws {
        let silent = try LoopbackSocket(listening: ())
        // Long enough that a busy machine's loopback connect never meets it: only the reply waits.
        let store = try silent.store(timeout: .seconds(1))
        // Nothing but the deadline can end these calls: the server never answers.
        let error = await expectError { try await store.answer(anyTransactionID: "c", in: .sandbox) }
        #expect(error?.code == .sharedCacheFailure)
        #expect(error?.message == "Redis at 127.0.0.1:\(silent.port): GET answer: timed out waiting for a reply")
        let lockError = await expectError {
            try await store.acquireFetchLock(anyTransactionID: "c", in: .sandbox, owner: "o", timeToLive: .seconds(1))
        }
        #expect(lockError?.code == .sharedCacheFailure)
        #expect(
            lockError?.message == "Redis at 127.0.0.1:\(silent.port): EVAL acquire-lock: timed out waiting for a reply"
        )
        // Each timed-out connection was closed: its reply could still come.
        #expect(store.pool.statistics.connectionsDiscarded == 2)
    }

    @Test("nothing listening: a store failure at once, naming the server")
    func refused() async throws {
        let dead = try LoopbackSocket(refusing: ())
        defer { withExtendedLifetime(dead) {} }
        let store = try dead.store()
        let error = await expectError { try await store.invalidate(anyTransactionID: "c") }
        #expect(error?.code == .sharedCacheFailure)
        #expect(
            error?.message == "Redis at 127.0.0.1:\(dead.port): EVAL invalidate: cannot connect: Connection refused"
        )
    }

    @Test("invalid configurations are refused before anything is sent")
    func invalidConfiguration() {
        for (host, port, prefix, timeout) in [
            ("", 6379, "p", Duration.seconds(1)), ("h", 0, "p", .seconds(1)), ("h", 70_000, "p", .seconds(1)),
            ("h", 6379, "", .seconds(1)), ("h", 6379, "p", .zero),
        ] {
            #expect(throws: AppStoreGroupsError.self) {
                try RedisGroupsCache(host: host, port: port, keyPrefix: prefix, timeout: timeout)
            }
        }
        for connections in [0, 1_025] {
            #expect(throws: AppStoreGroupsError.self) {
                try RedisGroupsCache(host: "h", port: 6379, keyPrefix: "p", maximumConnections: connections)
            }
        }
        #expect(throws: AppStoreGroupsError.self) {
            try RedisGroupsCache(host: "h", port: 6379, keyPrefix: "p", maximumClockSkew: .milliseconds(-1))
        }
        let defaults = try? RedisGroupsCache(host: "h", port: 6379, keyPrefix: "p")
        #expect(defaults?.maximumConnections == 32)
        #expect(defaults?.maximumClockSkew == .seconds(5))
    }

    @Test("RESP replies: every type, partial input, and bounds on what a server may send")
    func parser() throws {
        let parser = RESPParser(maximumBulkBytes: 10, maximumArrayCount: 3)
        func parse(_ text: String) throws -> RESPReply? { try parser.parse(Array(text.utf8)[...])?.0 }
        #expect(try parse("+OK\r\n") == .simple("OK"))
        #expect(try parse("-ERR no\r\n") == .error("ERR no"))
        #expect(try parse(":42\r\n") == .integer(42))
        #expect(try parse("$3\r\nabc\r\n") == .bulk(Array("abc".utf8)))
        #expect(try parse("$-1\r\n") == .bulk(nil))
        #expect(try parse("*2\r\n$1\r\n0\r\n*0\r\n") == .array([.bulk(Array("0".utf8)), .array([])]))
        #expect(try parse("$3\r\nab") == nil)
        #expect(try parse("*2\r\n:1\r\n") == nil)
        #expect(throws: RESPParser.Failure.tooLarge("a value of 11 bytes (the limit is 10)")) { try parse("$11\r\n") }
        #expect(throws: RESPParser.Failure.self) { try parse("*4\r\n") }
        #expect(throws: RESPParser.Failure.tooLarge("an array of 4 elements (the limit is 3)")) { try parse("*4\r\n") }
        #expect(try parse("*-1\r\n") == .array(nil))
        #expect(throws: RESPParser.Failure.malformed("a negative bulk length")) { try parse("$-2\r\n") }
        #expect(throws: RESPParser.Failure.malformed("a negative array length")) { try parse("*-2\r\n") }
        #expect(throws: RESPParser.Failure.self) { try parse("?x\r\n") }
        #expect(throws: RESPParser.Failure.self) { try parse("$3\r\nabcd\r\n") }
        #expect(throws: RESPParser.Failure.self) { try parse(":" + String(repeating: "9", count: 30) + "\r\n") }
        #expect(
            RESPReply.command([Array("GET".utf8), Array("k".utf8)]) == Array("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n".utf8)
        )
    }

    static let customer = "2000000123456789"

    @Test("a disabled command: the error names the command and Redis's code word, not the key", .requires(.redisServer))
    func disabledCommands() async throws {
        let server = try await RedisServer.start(arguments: [
            "--rename-command", "GET", "", "--rename-command", "EVAL", "",
        ])
        defer { server.stop() }
        let store = try server.store()
        let prefix = "Redis at 127.0.0.1:\(server.port): "
        let read = await expectError { try await store.answer(anyTransactionID: Self.customer, in: .sandbox) }
        #expect(read?.code == .sharedCacheFailure)
        #expect(read?.message == prefix + "GET answer: the server answered with an error (ERR)")
        let lock = await expectError {
            try await store.acquireFetchLock(
                anyTransactionID: Self.customer,
                in: .sandbox,
                owner: "owner-7",
                timeToLive: .seconds(1)
            )
        }
        #expect(lock?.message == prefix + "EVAL acquire-lock: the server answered with an error (ERR)")
        for error in [read, lock] {
            #expect(error.map { "\($0)".contains(Self.customer) } == false)
            #expect(error.map { "\($0)".contains("unknown command") } == false)
        }
    }

    @Test("an error reply's own text never passes, only a code word of capitals")
    func errorReplyText() async throws {
        let fake = try RedisFakeServer { _, index, _ in
            switch index {
            case 0: .reply(Array("-WRONGTYPE key test:Sandbox:groups:\(Self.customer) holds a list\r\n".utf8))
            case 1: .reply(Array("-\(Self.customer) is not allowed\r\n".utf8))
            default: .reply(Array("+\(Self.customer)\r\n".utf8))
            }
        }
        defer { fake.stop() }
        let store = try fake.store()
        let prefix = "Redis at 127.0.0.1:\(fake.port): "
        let messages = [
            await expectError { try await store.answer(anyTransactionID: Self.customer, in: .sandbox) }?.message,
            await expectError { try await store.invalidate(anyTransactionID: Self.customer) }?.message,
            await expectError { try await store.rateLimitedUntil(.customerGroups, in: .sandbox) }?.message,
        ]
        #expect(
            messages == [
                prefix + "GET answer: the server answered with an error (WRONGTYPE)",
                prefix + "EVAL invalidate: the server answered with an error (unknown)",
                prefix + "GET rate-limit: an unexpected status reply",
            ]
        )
    }
}
