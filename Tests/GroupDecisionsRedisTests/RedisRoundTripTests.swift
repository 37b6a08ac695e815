import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// The calls one decision makes to Redis: the fetch lock taken in one script with the answer and
/// generation, and released by the write that keeps the fetched answer, so an uncached decision waits
/// for Redis five times (counted by a proxy in front of a real redis-server, each time a connection
/// that was not waiting for a reply sends a call).
@Suite("Redis store: a decision's calls, the fetch lock in one script with the answer, generation and write")
struct RedisRoundTripTests {
    @Test("a count that is not a number fails the call closed", .requires(.redisServer))
    func malformedCount() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store()
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
        let server = try await RedisServer.start(proxyDelay: .zero)
        defer { server.stop() }
        let proxy = try #require(server.proxy)
        let store = try server.store(prefix: "test", timeout: .seconds(30))
        let source = StaticGroupsSource(["c1": Families.member])
        source.fail(
            "c1",
            with: AppStoreGroupsError(code: .generalInternalError, message: "Apple failed", httpStatus: 500)
        )
        let service = try fleetService(source, store)
        let error = await expectError { try await service.decide("c1") }
        #expect(error?.code == .generalInternalError)
        // The answer, the lock with the answer and generation, the 429 gate, a budget token, the
        // release.
        #expect(proxy.roundTrips == 5)
        #expect(try await store.call([Array("EXISTS".utf8), store.lockKey("c1", .sandbox)], "EXISTS") == .integer(0))
        #expect(try await store.answer(anyTransactionID: "c1", in: .sandbox) == nil)
    }

    static let customers = (0..<16).map { "c\($0)" }

    static func source() -> StaticGroupsSource {
        StaticGroupsSource(Dictionary(uniqueKeysWithValues: customers.map { ($0, Families.member) }))
    }

    @Test(
        "an uncached decision through a Redis 200 ms away: 5 round trips with the combined calls, 8 with the single ones, and its time printed with each",
        .requires(.redisServer)
    )
    func slowRedisTimes() async throws {
        let server = try await RedisServer.start(proxyDelay: .milliseconds(200))
        defer { server.stop() }
        let proxy = try #require(server.proxy)
        let store = try server.store(prefix: "trips", timeout: .seconds(30))
        var figures: [String] = []
        for (name, cache, trips, first) in [
            ("combined calls", store as any SharedGroupsCache, 5, 0),
            ("single calls", ScriptedGroupsCache(store), 8, 8),
        ] {
            let service = try fleetService(Self.source(), cache)
            // A first decision opens the connection.
            _ = try await service.decide("c\(first)")
            if let forwarding = cache as? ScriptedGroupsCache {
                #expect(
                    forwarding.calls == [
                        "answer", "acquireFetchLock", "answer", "invalidationGeneration", "rateLimitedUntil",
                        "takeBudgetToken", "setAnswerIfGeneration", "releaseFetchLock",
                    ]
                )
            }
            var times: [Duration] = []
            let before = proxy.roundTrips
            for run in 1...5 {
                let start = ContinuousClock.now
                _ = try await service.decide("c\(first + run)")
                times.append(start.duration(to: .now))
            }
            #expect(proxy.roundTrips - before == 5 * trips, "\(name)")
            let summary = RedisConcurrencyTests.summary(times)
            figures.append("Redis 200 ms away, one uncached decision, \(name) (\(trips) round trips): \(summary)")
        }
        for figure in figures { print(figure) }
    }
}
