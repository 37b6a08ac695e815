import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// The Redis store's combined fetch-lock scripts against a real redis-server: the lock taken with
/// the answer and generation, and released by the write that keeps the fetched answer.
@Suite("Redis store: the fetch lock in one script with the answer, generation and write")
struct RedisFetchLockTests {
    @Test(
        "lock taken, not taken, answer present, generation moved, write refused after an invalidation still releasing",
        .requires(.redisServer)
    )
    func contract() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store()
        defer { store.close() }
        try await SharedGroupsCacheConformance(readsWhenFetchLockTaken: true) { store }.run(.conditionalWrites)
    }

    @Test(
        "the owner that holds the lock takes it again: the script sent twice answers the same",
        .requires(.redisServer)
    )
    func reentrant() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store()
        defer { store.close() }
        #expect(try await SharedGroupsCacheConformance.acquire(store, "o1").acquired)
        #expect(try await SharedGroupsCacheConformance.acquire(store, "o1").acquired)
        #expect(try await SharedGroupsCacheConformance.acquire(store, "o2").acquired == false)
        let ttl = try await store.call([Array("PTTL".utf8), store.lockKey("c1", .sandbox)], "PTTL")
        guard case .integer(let left) = ttl else {
            Issue.record("no lock: \(ttl)")
            return
        }
        #expect((1...3_600_000).contains(left))
    }

    @Test(
        "the answer read with the lock proves its key and its fetch time, as a plain read does",
        .requires(.redisServer)
    )
    func answerProvesItself() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let now = RedisStoreProofTests.fetchedAt
        let store = try server.store(now: { now })
        defer { store.close() }
        let answer = RedisStoreProofTests.answer("a")
        try await store.setAnswer(answer, anyTransactionID: "a", in: .production, timeToLive: .seconds(60))
        let value = try await store.call([Array("GET".utf8), store.answerKey("a", .production)], "GET")
        _ = try await store.call([Array("SET".utf8), store.answerKey("b", .production), value.bulkValue], "SET")
        func attempt(_ customer: String) async throws -> FetchLockAttempt {
            try await store.acquireFetchLockAndRead(
                anyTransactionID: customer,
                in: .production,
                owner: "o",
                timeToLive: .seconds(10)
            )
        }
        #expect(try await attempt("a").answer == answer)
        // Copied to another customer's key: no answer there, and the lock is taken to fetch them.
        let copied = try await attempt("b")
        #expect(copied.acquired)
        #expect(copied.answer == nil)
        let future = RedisStoreProofTests.answer("f", at: now.addingTimeInterval(5.001))
        try await store.setAnswer(future, anyTransactionID: "f", in: .production, timeToLive: .seconds(60))
        let all = try await store.invalidationGeneration(anyTransactionID: "f", in: .production).all
        #expect(
            try await attempt("f")
                == FetchLockAttempt(acquired: true, answer: nil, generation: .init(customer: 0, all: all))
        )
    }

    @Test("a count that is not a number fails the call closed", .requires(.redisServer))
    func malformedCount() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store()
        defer { store.close() }
        _ = try await store.call([Array("SET".utf8), store.groupCountKey, Array("many".utf8)], "SET")
        let error = await expectError { try await SharedGroupsCacheConformance.acquire(store, "o1") }
        #expect(error?.code == .sharedCacheFailure)
        #expect(
            error?.message
                == "Redis at 127.0.0.1:\(server.port): EVAL acquire-lock-and-read: an unexpected array"
        )
    }

    @Test("an answer key of the wrong type fails the call before the lock is taken", .requires(.redisServer))
    func wrongTypeTakesNoLock() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store()
        defer { store.close() }
        _ = try await store.call([Array("LPUSH".utf8), store.answerKey("c1", .sandbox), Array("x".utf8)], "LPUSH")
        let error = await expectError { try await SharedGroupsCacheConformance.acquire(store, "o1") }
        #expect(
            error?.message
                == "Redis at 127.0.0.1:\(server.port): EVAL acquire-lock-and-read: the server answered with an error (WRONGTYPE)"
        )
        #expect(
            try await store.acquireFetchLock(
                anyTransactionID: "c1",
                in: .sandbox,
                owner: "o2",
                timeToLive: .seconds(10)
            )
        )
    }

    @Test(
        "a write that fails in its script has released the lock first (the release comes before any step that can fail)",
        .requires(.redisServer)
    )
    func failingWriteReleases() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store()
        defer { store.close() }
        let attempt = try await SharedGroupsCacheConformance.acquire(store, "o1")
        let generation = try #require(attempt.generation)
        // The group's member list is a string: the script fails when it lists the customer.
        _ = try await store.call([Array("SET".utf8), Array("test:Sandbox:members:g1".utf8), Array("x".utf8)], "SET")
        let error = await expectError {
            try await SharedGroupsCacheConformance.write(
                store,
                SharedGroupsCacheConformance.answer("g1"),
                groups: ["g1"],
                at: generation,
                releasing: "o1"
            )
        }
        #expect(
            error?.message
                == "Redis at 127.0.0.1:\(server.port): EVAL set-answer-release-lock: the server answered with an error (WRONGTYPE)"
        )
        #expect(try await SharedGroupsCacheConformance.acquire(store, "o2").acquired)
    }

    @Test(
        "a decision whose fetch fails releases the lock in one call, and leaves no answer",
        .requires(.redisServer)
    )
    func failedFetchReleases() async throws {
        let fleet = try await RedisFleet.start(proxyDelay: .zero)
        defer { fleet.stop() }
        let proxy = try #require(fleet.proxy)
        let store = try fleet.store(prefix: "test", timeout: .seconds(30))
        let source = StaticGroupsSource(["c1": Families.member])
        source.fail(
            "c1",
            with: AppStoreGroupsError(code: .generalInternalError, message: "Apple failed", httpStatus: 500)
        )
        let service = try FleetInvalidationTests.service(source, shared: store)
        let error = await expectError { try await service.decision(anyTransactionID: "c1", environment: .sandbox) }
        #expect(error?.code == .generalInternalError)
        // The answer, the lock with the answer and generation, the 429 gate, a budget token, the
        // release.
        #expect(proxy.roundTrips == 5)
        #expect(try await store.call([Array("EXISTS".utf8), store.lockKey("c1", .sandbox)], "EXISTS") == .integer(0))
        #expect(try await store.answer(anyTransactionID: "c1", in: .sandbox) == nil)
    }
}

extension RESPReply {
    /// The bytes of a bulk reply (empty for anything else).
    var bulkValue: [UInt8] {
        if case .bulk(let value?) = self { return value }
        return []
    }
}
