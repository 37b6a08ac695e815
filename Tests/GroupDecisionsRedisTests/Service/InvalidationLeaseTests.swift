import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// The shared cache's invalidation count: a process serves its own copy of an answer only while a recent reading of the
/// count confirms it, on every path, so an invalidation through any process has reached every process when it returns.
@Suite("Decision service: an invalidation reaches every process before it returns")
struct InvalidationLeaseTests {
    @Test(
        "an invalidation through process B has reached process A when it returns",
        .requires(.redisServer),
        arguments: SharedStore.allCases,
        Invalidation.allCases
    )
    func reachesEveryProcess(_ store: SharedStore, _ invalidation: Invalidation) async throws {
        let (storeA, storeB, server) = try await store.pair()
        defer { server?.stop() }
        let apple = StaticGroupsSource(["c": Families.member])
        let serviceA = try fleetService(apple, storeA)
        let serviceB = try fleetService(apple, storeB)
        // A fetched once and served its own copy; after B's invalidation A fetched again, at once.
        #expect(try await sources(serviceA, ["c", "c"]) == ["live", "cache"])
        #expect(apple.callCount == 1)
        // Apple changes the customer's groups; the notification reaches service B.
        apple.setAnswer(Families.noGroups, for: "c")
        try await invalidation.run(on: serviceB)
        #expect(try await serviceA.decide("c").outcome == ("live", []))
        #expect(apple.callCount == 2)
        if let redis = storeA as? RedisGroupsCache {
            _ = try await redis.freshCount()
        } else {
            #expect(try await storeA.invalidationCount() == 1)
        }
    }

    @Test(
        "while the shared cache cannot be read, this process serves none of its copies: refused with Retry-After, nothing sent (real redis-server)",
        .requires(.redisServer)
    )
    func storeDown() async throws {
        let server = try await RedisServer.start()
        let clock = ManualClock(Date())
        let source = StaticGroupsSource(["c": Families.member])
        let service = try fleetService(source, try server.store(prefix: "down", now: clock.now), clock: clock) {
            $0.rateLimits.fallbackShare = 0
        }
        #expect(try await sources(service, ["c", "c"]) == ["live", "cache"])
        await server.stopAndWait()
        clock.advance(by: service.configuration.sharedCache.invalidationCheckInterval)
        let refused = await expectError { _ = try await service.decide("c") }
        #expect(refused?.code == .rateLimitExceeded)
        #expect(refused?.retryAfter != nil)
        #expect(source.callCount == 1)
        // An invalidation cannot complete meanwhile.
        #expect(await expectError { try await service.invalidate(groupID: "g1") }?.code == .sharedCacheFailure)
    }

    @Test(
        "a process skipping a slow shared cache still reads the count: another's invalidation reaches it (real redis-server)",
        .requires(.redisServer),
        .timeLimit(.minutes(5))
    )
    func slowCacheSkippedStillReadsCount() async throws {
        // Process B reaches Redis through a proxy holding each command 200 ms: slow, not failing.
        let server = try await RedisServer.start(proxyDelay: .milliseconds(200))
        defer { server.stop() }
        let apple = StaticGroupsSource(["c": Families.member])
        let serviceA = try fleetService(apple, try server.store(prefix: "slow", direct: true))
        let serviceB = try ServiceHarness(
            source: apple,
            sharedCache: try server.store(prefix: "slow", timeout: .seconds(30)),
            time: .system
        ) {
            // Long enough that neither the skip nor B's copy ends during the test, however busy the machine.
            $0.sharedCache.health.retryInterval = .seconds(600)
            $0.localCache.timeToLive = .seconds(600)
        }
        .service
        // B's uncached decision makes five slow calls in a row: B now skips its cache as slow.
        #expect(try await serviceB.decide("c").source == .live)
        apple.setAnswer(Families.noGroups, for: "c")
        // A's cache is fast: the invalidation completes, and returns after the check interval.
        try await serviceA.invalidate(anyTransactionID: "c")
        #expect(try await serviceB.decide("c").decision.capabilities.sorted() == [])
    }

    @Test(
        "an uncached decision makes 5 round trips (the answer, the lock with the answer and generation, the 429 gate, a budget token, the write releasing the lock); a hit within the check interval none; one after it reads the count alone, and 64 concurrent hits share that read; another process reads the answer in one; a fetch that fails releases the lock in one call, and leaves no answer",
        .requires(.redisServer),
        arguments: [1, 64]
    )
    func hitRoundTrips(concurrentHits: Int) async throws {
        let server = try await RedisServer.start(proxyDelay: .zero)
        defer { server.stop() }
        let proxy = try #require(server.proxy)
        let clock = ManualClock(Date())
        let store = try server.store(prefix: "trips", timeout: .seconds(30), now: clock.now)
        let source = StaticGroupsSource(["c1": Families.member, "c2": Families.member])
        let service = try fleetService(source, store, clock: clock)
        #expect(try await service.decide("c1").source == .live)
        #expect(proxy.roundTrips == 5)
        #expect(try await sources(service, ["c1", "c1", "c1"]) == ["cache", "cache", "cache"])
        #expect(proxy.roundTrips == 5)
        #expect(try await service.decide("c2").source == .live)
        clock.advance(by: service.configuration.sharedCache.invalidationCheckInterval)
        let served = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<concurrentHits {
                group.addTask { try await service.decide(index.isMultiple(of: 2) ? "c1" : "c2").source.name }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(served == Array(repeating: "cache", count: concurrentHits))
        #expect(proxy.roundTrips == 11)
        #expect(try await service.decide("c1").source == .cache)
        #expect(proxy.roundTrips == 11)
        // Another process finds the answer in one round trip, and the fetch released the lock.
        let other = try fleetService(source, store, clock: clock)
        #expect(try await other.decide("c1").decision.capabilities.sorted() == Families.capabilities)
        #expect(proxy.roundTrips == 12)
        #expect(source.callCount == 2)
        // A failing fetch: the answer, the lock with answer and generation, the 429 gate, a budget token, the release.
        let failure = AppStoreGroupsError(code: .generalInternalError, message: "Apple failed", httpStatus: 500)
        source.fail("c3", with: failure)
        #expect(await expectError { try await service.decide("c3") }?.code == .generalInternalError)
        #expect(proxy.roundTrips == 17)
        #expect(try await store.send(["EXISTS", "trips:Sandbox:lock:c1"]) == .integer(0))
        #expect(try await store.send(["EXISTS", "trips:Sandbox:lock:c3"]) == .integer(0))
        #expect(try await store.answer(anyTransactionID: "c3", in: .sandbox) == nil)
    }

    /// How process B comes to skip its shared cache, and whether the cache answers again.
    enum Skip: String, CaseIterable, Sendable {
        /// One read of the count fails (a timeout, a connection reset); the cache then answers again.
        case countReadFailed
        /// The revocation storm below; the cache then answers again.
        case storm
        /// The revocation storm; the cache still fails.
        case stormStillFailing
    }

    // Service A and service B (through a cache whose calls the test fails) share an in-memory cache on one clock. In
    // the storm, answers live 1 s with no refresh ahead, as the revocation storm that once printed a stale answer after
    // an invalidation's 200 ran (`--cache-ttl 1 --refresh-ahead 0`): B holds c's answer past its time to live, one of
    // B's calls fails (a timeout on a loaded machine) so B skips the cache, and A invalidates c. Once the cache that
    // failed answers again, B reads the count although it still skips the cache, sees it moved, and fetches c; while it
    // still fails, B refuses c rather than serve it stale.
    @Test(
        "a process that skipped its shared cache after one failure serves none of its copies, fresh or past its time to live, and reads the count again once the cache is back",
        arguments: Skip.allCases
    )
    func skippedCacheServesNoCopy(_ skip: Skip) async throws {
        let clock = ManualClock()
        let shared = InMemoryGroupsCache(now: clock.now)
        let throughB = ScriptedGroupsCache(shared, countsInvalidations: true)
        let apple = StaticGroupsSource(["c": Families.member])
        let configure = { (configuration: inout GroupDecisionService.Configuration) in
            configuration.rateLimits.fallbackShare = 0
            guard skip != .countReadFailed else { return }
            configuration.freshness = FreshnessPolicy(timeToLive: .seconds(1))
            configuration.freshness.refreshAfter = nil
        }
        let serviceA = try fleetService(apple, shared, clock: clock, configure: configure)
        let serviceB = try fleetService(apple, throughB, clock: clock, configure: configure)
        #expect(try await serviceB.decide("c").source == .live)
        if skip == .countReadFailed {
            // B skips the cache for the retry interval (5 seconds), and serves no copy the count
            // does not confirm: the customer is refused with Retry-After, nothing sent to Apple.
            throughB.fail(["invalidationCount"])
            clock.advance(by: serviceB.configuration.sharedCache.invalidationCheckInterval)
            #expect(await expectError { _ = try await serviceB.decide("c") }?.code == .rateLimitExceeded)
        } else {
            // Past the time to live, within the maximum age and the local time to live: B would serve
            // its copy stale when the budget spares no token for the refresh. One of B's calls fails:
            // B skips the cache, and refuses a customer it holds nothing for.
            clock.advance(by: .milliseconds(1_500))
            throughB.fail(["answer"])
            #expect(await expectError { _ = try await serviceB.decide("other") }?.code == .rateLimitExceeded)
        }
        #expect(apple.callCount == 1)
        throughB.fail(skip == .stormStillFailing ? ["answer", "invalidationCount"] : [])
        apple.setAnswer(Families.noGroups, for: "c")
        try await serviceA.invalidate(anyTransactionID: "c")
        if skip == .stormStillFailing {
            #expect(await expectError { _ = try await serviceB.decide("c") }?.code == .rateLimitExceeded)
            #expect(apple.callCount == 1)
        } else {
            #expect(try await serviceB.decide("c").outcome == ("live", []))
            #expect(apple.callCount == 2)
        }
    }

    @Test("a local time to live of zero keeps nothing here: every decision reads the shared cache")
    func localTimeToLiveZero() async throws {
        let clock = ManualClock()
        let shared = InMemoryGroupsCache(now: clock.now)
        let apple = StaticGroupsSource(["c": Families.member])
        let serviceA = try fleetService(apple, shared, clock: clock) { $0.localCache.timeToLive = .zero }
        let serviceB = try fleetService(apple, shared, clock: clock) { $0.localCache.timeToLive = .zero }
        #expect(try await sources(serviceB, ["c", "c"]) == ["live", "cache"])
        apple.setAnswer(Families.noGroups, for: "c")
        try await serviceA.invalidate(anyTransactionID: "c")
        // No clock move: a copy kept here would be confirmed by B's reading made at its first decision.
        #expect(try await serviceB.decide("c").outcome == ("live", []))
    }

    @Test(
        "the check interval is validated: positive, at most the local time to live",
        arguments: [
            (Duration.zero, Duration.seconds(5), "sharedCache.invalidationCheckInterval must be positive"),
            (.milliseconds(-1), .seconds(5), "sharedCache.invalidationCheckInterval must be positive"),
            (
                .milliseconds(5_001), .seconds(5),
                "sharedCache.invalidationCheckInterval must be at most localCache.timeToLive"
            ),
            (.seconds(5), .seconds(5), nil),
            // Nothing is kept here with a local time to live of zero: any positive interval will do.
            (.milliseconds(250), .zero, nil),
        ] as [(Duration, Duration, String?)]
    )
    func checkIntervalValidated(interval: Duration, localTimeToLive: Duration, problem: String?) throws {
        #expect(GroupDecisionService.Configuration().sharedCache.invalidationCheckInterval == .milliseconds(250))
        #expect(GroupDecisionService.Configuration().localCache.timeToLive == .seconds(5))
        do {
            _ = try ServiceHarness(source: StaticGroupsSource([:])) {
                $0.sharedCache.invalidationCheckInterval = interval
                $0.localCache.timeToLive = localTimeToLive
            }
            #expect(problem == nil)
        } catch let error as AppStoreGroupsError {
            #expect(error.code == .invalidConfiguration)
            #expect(error.message == problem)
        }
    }

    @Test("an invalidation waits the check interval on the service's clock; none without a shared cache or a count")
    func invalidationWaits() async throws {
        let source = StaticGroupsSource(["c": Families.member])
        // A shared cache that keeps no count: no wait, as before the count existed.
        let caches: [((any SharedGroupsCache)?, Int)] = [
            (InMemoryGroupsCache(), 3), (nil, 0), (ScriptedGroupsCache(), 0),
        ]
        for (cache, sleeps) in caches {
            let clock = ManualClock()
            let service = try fleetService(source, cache, clock: clock)
            for invalidation in Invalidation.allCases { try await invalidation.run(on: service) }
            #expect(clock.sleeps == Array(repeating: .milliseconds(250), count: sleeps))
        }
    }
}
