import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// What the Redis store reads must prove where it belongs.
///
/// It must be a reply to the command that asked for it (a reply nobody asked for fails its call, and its connection is
/// not reused, or it would answer the next command), a value to the key and environment it is read from, a fetch time
/// no later than now. A value no process wrote is input like any other: it must not crash the process that reads it,
/// nor grant anything.
@Suite("Redis store: replies and values that prove where they belong, and corrupted ones that grant nothing")
struct RedisStoreProofTests {
    static let fetchedAt = Date(timeIntervalSince1970: 1_700_000_000.5)

    static func answer(_ customer: String, at date: Date = fetchedAt) -> CachedGroupsAnswer {
        CachedGroupsAnswer(
            kind: .groups,
            body: Array(#"{"groups":[{"groupId":"\#(customer)","groupType":"ORGANIZATION"}]}"#.utf8),
            fetchedAt: date
        )
    }

    @Test("a reply sent again 30 ms late, after its connection went back to the pool, answers no later call")
    func lateRepeatedReply() async throws {
        let fake = try RedisFakeServer { connection, index, _ in
            connection == 1 && index == 0 ? .standardThenAgain(after: .milliseconds(30)) : .standard
        }
        defer { fake.stop() }
        let store = try fake.store()
        let keyA = store.answerKey("customer-a", .sandbox)
        fake.set(keyA, Self.answer("customer-a").encoded(boundTo: keyA))
        #expect(try await store.answer(anyTransactionID: "customer-a", in: .sandbox) == Self.answer("customer-a"))
        // The repeat reaches the idle connection, which is closed rather than kept.
        try await waitUntil { fake.repeatedReplies == 1 }
        try await waitUntil { store.pool.statistics.connectionsDiscarded == 1 }
        #expect(try await store.answer(anyTransactionID: "customer-b", in: .sandbox) == nil)
        #expect(fake.connections == 2)
    }

    @Test("a reply sent again ahead of the next reply fails that call: the replies are not the ones asked for")
    func repeatedReplyOutOfPlace() async throws {
        let instant = Date().addingTimeInterval(3_600)
        let milliseconds = Array(String(Int64(instant.timeIntervalSince1970 * 1000)).utf8)
        // The second command of the first connection is answered with the first one's reply, then
        // its own (no instant): the repeat arrives exactly where the next reply is expected.
        let fake = try RedisFakeServer { connection, index, _ in
            connection == 1 && index == 1
                ? .reply(RedisFakeServer.bulk(milliseconds) + Array("$-1\r\n".utf8)) : .standard
        }
        defer { fake.stop() }
        let store = try fake.store()
        fake.set(store.rateKey(.customerGroups, .sandbox), milliseconds)
        let limited = try await store.rateLimitedUntil(.customerGroups, in: .sandbox)
        #expect(limited.map { Int64($0.timeIntervalSince1970 * 1000) } == Int64(instant.timeIntervalSince1970 * 1000))
        let error = await expectError { try await store.rateLimitedUntil(.groupMembers, in: .sandbox) }
        #expect(error?.code == .sharedCacheFailure)
        #expect(
            error?.message == "Redis at 127.0.0.1:\(fake.port): GET rate-limit: the replies were not the ones asked for"
        )
        // The connection is gone with its surprise; the next call is answered on a new one.
        #expect(try await store.rateLimitedUntil(.groupMembers, in: .sandbox) == nil)
        #expect(fake.connections == 2)
    }

    /// How the store reads an answer: alone, or in the script that takes the fetch lock with it.
    enum ReadPath: String, CaseIterable, Sendable {
        case get, withFetchLock

        /// The answer read for `customer`; read with the lock, a read that finds none takes the lock
        /// and reads the customer's generation too.
        func answer(
            _ store: RedisGroupsCache,
            _ customer: String,
            in environment: StoreEnvironment = .sandbox
        ) async throws -> CachedGroupsAnswer? {
            guard self == .withFetchLock else {
                return try await store.answer(anyTransactionID: customer, in: environment)
            }
            let attempt = try await store.acquireFetchLockAndRead(
                anyTransactionID: customer,
                in: environment,
                owner: "o",
                timeToLive: .seconds(10)
            )
            if attempt.answer == nil {
                let generation = try await store.invalidationGeneration(anyTransactionID: customer, in: environment)
                #expect(attempt == FetchLockAttempt(acquired: true, answer: nil, generation: generation))
            }
            return attempt.answer
        }
    }

    @Test(
        "a value copied to another customer's, environment's or app's key is no answer there; a fetch time further ahead than the clock skew is no answer, one within it is",
        .requires(.redisServer),
        arguments: ReadPath.allCases
    )
    func copiedValueAndFutureFetchTime(_ path: ReadPath) async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let now = Self.fetchedAt
        let store = try server.store(now: { now })
        // An hour, as below: a run beside a loaded CI took longer than a minute to read it back.
        try await store.setAnswer(Self.answer("a"), anyTransactionID: "a", in: .production, timeToLive: .seconds(3600))
        let value = try await store.call([Array("GET".utf8), store.answerKey("a", .production)], "GET").bulkValue
        let other = try server.store(prefix: "other")
        for key in [
            store.answerKey("b", .production), store.answerKey("a", .sandbox), other.answerKey("a", .production),
        ] {
            _ = try await store.call([Array("SET".utf8), key, value], "SET")
        }
        #expect(try await path.answer(store, "a", in: .production) == Self.answer("a"))
        #expect(try await path.answer(store, "b", in: .production) == nil)
        #expect(try await path.answer(store, "a", in: .sandbox) == nil)
        #expect(try await path.answer(other, "a", in: .production) == nil)
        #expect(store.maximumClockSkew == .seconds(5))
        let cases: [(String, Date, Bool)] = [
            ("now", now, true),
            ("within", now.addingTimeInterval(5), true),
            ("beyond", now.addingTimeInterval(5.001), false),
            ("year-9999", Date(timeIntervalSince1970: 253_402_300_799.999), false),
        ]
        for (customer, fetchedAt, served) in cases {
            let answer = Self.answer(customer, at: fetchedAt)
            // An hour, not a minute: a run under two busy loops once took longer than a minute
            // between this write and the strict store's read below, and Redis had dropped it.
            try await store.setAnswer(answer, anyTransactionID: customer, in: .sandbox, timeToLive: .seconds(3600))
            #expect(try await path.answer(store, customer) == (served ? answer : nil), "\(customer)")
        }
        let strict = try RedisGroupsCache(
            host: "127.0.0.1",
            port: server.port,
            keyPrefix: "test",
            timeout: .seconds(10),
            maximumClockSkew: .zero,
            now: { now }
        )
        #expect(try await path.answer(strict, "now") == Self.answer("now", at: now))
        #expect(try await path.answer(strict, "within") == nil)
    }

    /// An answer as `CachedGroupsAnswer.encoded(boundTo:)` lays it out, with any fetch time.
    static func encoded(fetchedAtMilliseconds: UInt64, body: String, key: [UInt8] = []) -> [UInt8] {
        var bytes = Array("GPA2".utf8) + [0]
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: fetchedAtMilliseconds >> UInt64(shift)))
        }
        for shift in stride(from: 24, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: key.count >> shift))
        }
        return bytes + key + Array(body.utf8)
    }

    @Test(
        "the encoding binds a value to its key and a plausible fetch time: another key, a truncated key, the earlier layout, a fetch time after the year 9999 or before 1970 read as nothing"
    )
    func binding() {
        let key = Array("app:Sandbox:groups:a".utf8)
        let answer = Self.answer("a")
        let encoded = answer.encoded(boundTo: key)
        #expect(CachedGroupsAnswer(encoded: encoded, boundTo: key) == answer)
        #expect(CachedGroupsAnswer(encoded: encoded, boundTo: Array("app:Sandbox:groups:b".utf8)) == nil)
        #expect(CachedGroupsAnswer(encoded: encoded, boundTo: Array("app:Sandbox:groups:".utf8)) == nil)
        #expect(CachedGroupsAnswer(encoded: encoded, boundTo: []) == nil)
        #expect(CachedGroupsAnswer(encoded: Array(encoded.prefix(17 + key.count - 1)), boundTo: key) == nil)
        // Another format's tag, the rest intact, is no answer.
        #expect(CachedGroupsAnswer(encoded: Array("GPA1".utf8) + encoded.dropFirst(4), boundTo: key) == nil)
        // The layout before keys were written in: a tag, the kind, the time, the body.
        let earlier = Array("GPA1".utf8) + [0] + Array(encoded[5..<13]) + answer.body
        #expect(CachedGroupsAnswer(encoded: earlier, boundTo: key) == nil)
        #expect(CachedGroupsAnswer(encoded: earlier) == nil)
        let body = Families.memberBody
        #expect(CachedGroupsAnswer(encoded: Self.encoded(fetchedAtMilliseconds: UInt64(Int64.max), body: body)) == nil)
        #expect(CachedGroupsAnswer(encoded: Self.encoded(fetchedAtMilliseconds: UInt64.max, body: body)) == nil)
        let latest = CachedGroupsAnswer(encoded: Self.encoded(fetchedAtMilliseconds: 253_402_300_799_999, body: body))
        #expect(latest?.fetchedAt == Date(timeIntervalSince1970: 253_402_300_799.999))
    }

    @Test("the extra reply fails its call and goes with its connection, never read as the next command's answer")
    func extraReply() async throws {
        // The first command of each connection is answered with a null and then an integer 5: one reply too many.
        let fake = try RedisFakeServer { _, index, _ in index == 0 ? .reply(Array("$-1\r\n:5\r\n".utf8)) : .standard }
        defer { fake.stop() }
        let store = try fake.store()
        let error = await expectError { try await store.rateLimitedUntil(.customerGroups, in: .sandbox) }
        #expect(error?.code == .sharedCacheFailure)
        #expect(
            error?.message == "Redis at 127.0.0.1:\(fake.port): GET rate-limit: the replies were not the ones asked for"
        )
        // Each later call starts on a new connection, whose first command gets one reply too many.
        #expect(await expectError { try await store.rateLimitedUntil(.customerGroups, in: .sandbox) } != nil)
        #expect(await expectError { try await store.answer(anyTransactionID: "c1", in: .sandbox) } != nil)
        #expect(fake.connections == 3)
    }

    /// The timestamps themselves are `TimestampTests`'.
    @Test("instants beyond any calendar print without trapping: records, errors")
    func extremeInstantsPrint() {
        let record = DecisionLogRecord(
            time: Date(timeIntervalSince1970: 1e300),
            customerHash: "00",
            environment: "Sandbox",
            source: "cache",
            fetchedAt: Date(timeIntervalSince1970: Double(Int64.max) / 1000)
        )
        #expect(
            record.jsonLine
                == #"{"time":"9999-12-31T23:59:59.999Z","customer":"00","environment":"Sandbox","source":"cache","#
                + #""fetchedAt":"9999-12-31T23:59:59.999Z","capabilities":[]}"#
        )
        let error = AppStoreGroupsError(
            code: .rateLimitExceeded,
            message: "held back",
            retryAfter: Date(timeIntervalSince1970: Double(Int64.max) / 1000)
        )
        #expect(error.description == "held back (retry after 9.223372036854776e+18 ms since 1970)")
    }

    @Test(
        "Redis holding an answer from the year 292 million and a 429 instant at Int64.max: no crash, nothing granted",
        .requires(.redisServer)
    )
    func corruptedRedisValues() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store()
        let key = store.answerKey("c1", .sandbox)
        let value = Self.encoded(fetchedAtMilliseconds: UInt64(Int64.max), body: Families.memberBody, key: key)
        _ = try await store.call([Array("SET".utf8), key, value], "SET")
        let stub = StubGroupsSource()
        // The fleet's configuration: a cache never skipped as slow, and while the corrupted cache is
        // skipped, the process keeps fetching within a share of its own.
        let harness = try ServiceHarness(source: stub, sharedCache: store, time: .system, configuration: .fleet)
        let service = harness.service
        // The corrupted answer is no answer: the customer is fetched.
        let served = try await service.decide("c1")
        #expect(served.source == .live)
        #expect(stub.requests == ["c1"])
        try await store.send(["SET", "test:Sandbox:rate-limited-until:customer-groups", String(Int64.max)])
        // An instant that is not one this store writes is a store failure: logged, and this
        // process carries on with its own gate and budget.
        let second = try await service.decide("c2")
        #expect(second.source == .live)
        #expect(stub.requests == ["c1", "c2"])
        #expect(
            harness.observer.lines == [
                "shared cache failed: Redis at 127.0.0.1:\(server.port): GET rate-limit: the instant is not "
                    + "a number of milliseconds"
            ]
        )
    }
}
