import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// What the Redis store reads must prove it belongs: a reply to the command that asked for it, a
/// value to the key and environment it is read from, a fetch time no later than now.
@Suite("Redis store: replies and values that prove where they belong")
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
        defer { store.close() }
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
        defer { store.close() }
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

    @Test(
        "a value copied to another customer's, environment's or app's key is no answer there",
        .requires(.redisServer)
    )
    func copiedValue() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store()
        defer { store.close() }
        try await store.setAnswer(Self.answer("a"), anyTransactionID: "a", in: .production, timeToLive: .seconds(60))
        let copied = try await store.call([Array("GET".utf8), store.answerKey("a", .production)], "GET")
        guard case .bulk(let value?) = copied else {
            Issue.record("no value under a's key: \(copied)")
            return
        }
        let other = try server.store(prefix: "other")
        defer { other.close() }
        for key in [
            store.answerKey("b", .production), store.answerKey("a", .sandbox), other.answerKey("a", .production),
        ] {
            _ = try await store.call([Array("SET".utf8), key, value], "SET")
        }
        #expect(try await store.answer(anyTransactionID: "a", in: .production) == Self.answer("a"))
        #expect(try await store.answer(anyTransactionID: "b", in: .production) == nil)
        #expect(try await store.answer(anyTransactionID: "a", in: .sandbox) == nil)
        #expect(try await other.answer(anyTransactionID: "a", in: .production) == nil)
    }

    @Test("a fetch time further ahead than the clock skew is no answer; one within it is", .requires(.redisServer))
    func futureFetchTime() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let now = Self.fetchedAt
        let store = try server.store(now: { now })
        defer { store.close() }
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
            let read = try await store.answer(anyTransactionID: customer, in: .sandbox)
            #expect(read == (served ? answer : nil), "\(customer)")
        }
        let strict = try RedisGroupsCache(
            host: "127.0.0.1",
            port: server.port,
            keyPrefix: "test",
            timeout: .seconds(10),
            maximumClockSkew: .zero,
            now: { now }
        )
        defer { strict.close() }
        #expect(try await strict.answer(anyTransactionID: "now", in: .sandbox) == Self.answer("now", at: now))
        #expect(try await strict.answer(anyTransactionID: "within", in: .sandbox) == nil)
    }

    @Test("the encoding binds a value to its key: another key, a truncated key or the earlier layout read as nothing")
    func binding() {
        let key = Array("app:Sandbox:groups:a".utf8)
        let answer = Self.answer("a")
        let encoded = answer.encoded(boundTo: key)
        #expect(CachedGroupsAnswer(encoded: encoded, boundTo: key) == answer)
        #expect(CachedGroupsAnswer(encoded: encoded, boundTo: Array("app:Sandbox:groups:b".utf8)) == nil)
        #expect(CachedGroupsAnswer(encoded: encoded, boundTo: Array("app:Sandbox:groups:".utf8)) == nil)
        #expect(CachedGroupsAnswer(encoded: encoded, boundTo: []) == nil)
        #expect(CachedGroupsAnswer(encoded: Array(encoded.prefix(17 + key.count - 1)), boundTo: key) == nil)
        // The layout before keys were written in: a tag, the kind, the time, the body.
        let earlier = Array("GPA1".utf8) + [0] + Array(encoded[5..<13]) + answer.body
        #expect(CachedGroupsAnswer(encoded: earlier, boundTo: key) == nil)
        #expect(CachedGroupsAnswer(encoded: earlier) == nil)
    }
}
