import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// The calls one decision makes to Redis: the fetch lock taken in one script with the answer and generation, and
/// released by the write that keeps the fetched answer, so an uncached decision waits for Redis five times (counted by
/// a proxy in front of a real redis-server, each time a connection that was not waiting for a reply sends a call).
@Suite("Redis store: a decision's calls, the fetch lock in one script with the answer, generation and write")
struct RedisRoundTripTests {
    @Test(
        "a value the scripts cannot use fails the call closed, naming the script; a key of the wrong type leaves the lock free (the reads, and the write's release, come before any step that can fail)",
        .requires(.redisServer),
        arguments: [
            // A count that is not a number.
            (["SET", "test:group-count", "many"], "acquire-lock-and-read: an unexpected array"),
            // An answer key of the wrong type: the lock is not taken.
            (
                ["LPUSH", "test:Sandbox:groups:c1", "x"],
                "acquire-lock-and-read: the server answered with an error (WRONGTYPE)"
            ),
            // The group's member list is a string: the write's script fails when it lists the
            // customer, having released the lock first.
            (
                ["SET", "test:Sandbox:members:g1", "x"],
                "set-answer-release-lock: the server answered with an error (WRONGTYPE)"
            ),
        ]
    )
    func failingScript(_ corruption: [String], _ failure: String) async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store()
        let writing = failure.hasPrefix("set-answer-release-lock")
        let attempt = writing ? try await SharedGroupsCacheConformance.acquire(store, "o1") : nil
        try await store.send(corruption)
        let error = await expectError {
            guard let generation = attempt?.generation else {
                return try await SharedGroupsCacheConformance.acquire(store, "o1").acquired
            }
            let answer = SharedGroupsCacheConformance.answer("g1")
            return try await SharedGroupsCacheConformance.write(
                store,
                answer,
                groups: ["g1"],
                at: generation,
                releasing: "o1"
            )
        }
        #expect(error?.code == .sharedCacheFailure)
        #expect(error?.message == "Redis at 127.0.0.1:\(server.port): EVAL \(failure)")
        if failure.hasSuffix("(WRONGTYPE)") {
            let free = try await store.acquireFetchLock(
                anyTransactionID: "c1",
                in: .sandbox,
                owner: "o2",
                timeToLive: .seconds(10)
            )
            #expect(free)
        }
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
            let service = try fleetService(StaticGroupsSource(Families.customers(16)), cache)
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
            let before = proxy.roundTrips
            let summary = try await RedisConcurrencyTests.timed(1...5) {
                _ = try await service.decide("c\(first + $0)")
            }
            #expect(proxy.roundTrips - before == 5 * trips, "\(name)")
            figures.append("Redis 200 ms away, one uncached decision, \(name) (\(trips) round trips): \(summary)")
        }
        for figure in figures { print(figure) }
    }
}
