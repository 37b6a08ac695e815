import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// The shared cache's invalidation count: a process serves its own copy of an answer only while a
/// recent reading of the count confirms it, so an invalidation through any process has reached
/// every process when it returns.
@Suite("Decision service: an invalidation reaches every process before it returns")
struct InvalidationCountTests {
    /// The customer's answer before and after Apple changed it.

    /// The three invalidations, by name.
    enum Invalidation: String, CaseIterable, Sendable {
        case customer, group, all

        func run(on service: GroupDecisionService) async throws {
            switch self {
            case .customer: try await service.invalidate(anyTransactionID: "c")
            case .group: try await service.invalidate(groupID: "g1")
            case .all: try await service.invalidateAll()
            }
        }
    }

    /// Service A (with its own source) decides a customer twice, service B invalidates, and A decides
    /// again at once: what A's source was asked, and A's answers.
    static func invalidatedThroughAnother(
        _ invalidation: Invalidation,
        storeA: any SharedGroupsCache,
        storeB: any SharedGroupsCache
    ) async throws -> (callsBefore: Int, callsAfter: Int, sources: [String], capabilities: [String]) {
        let sourceA = StaticGroupsSource(["c": Families.member])
        let sourceB = StaticGroupsSource(["c": Families.member])
        let serviceA = try FleetInvalidationTests.service(sourceA, shared: storeA)
        let serviceB = try FleetInvalidationTests.service(sourceB, shared: storeB)
        var sources: [String] = []
        sources.append(try await serviceA.decision(anyTransactionID: "c", environment: .sandbox).source.name)
        sources.append(try await serviceA.decision(anyTransactionID: "c", environment: .sandbox).source.name)
        let callsBefore = sourceA.callCount
        // Apple changes the customer's groups; the notification reaches service B.
        sourceA.setAnswer(Families.noGroups, for: "c")
        sourceB.setAnswer(Families.noGroups, for: "c")
        try await invalidation.run(on: serviceB)
        let served = try await serviceA.decision(anyTransactionID: "c", environment: .sandbox)
        sources.append(served.source.name)
        return (callsBefore, sourceA.callCount, sources, served.decision.capabilities.sorted())
    }

    @Test(
        "an invalidation through server B has reached server A when it returns (real redis-server)",
        .requires(.redisServer),
        arguments: Invalidation.allCases
    )
    func reachesEveryServerRedis(_ invalidation: Invalidation) async throws {
        let fleet = try await RedisFleet.start()
        defer { fleet.stop() }
        let (storeA, storeB) = try fleet.pair(prefix: "fleet")
        let result = try await Self.invalidatedThroughAnother(invalidation, storeA: storeA, storeB: storeB)
        // A fetched once and served its own copy; after B's invalidation A fetched again, at once.
        #expect(result.callsBefore == 1)
        #expect(result.sources == ["live", "cache", "live"])
        #expect(result.callsAfter == 2)
        #expect(result.capabilities == [])
        // One invalidation: a fresh value (see InvalidationCountValueTests).
        let count = try #require(try await storeA.invalidationCount())
        #expect(RedisGroupsCache.invalidationCounts.contains(count))
        #expect(
            try await storeA.call([Array("GET".utf8), Array("fleet:invalidations".utf8)], "GET")
                == .bulk(Array(String(count).utf8))
        )
    }

    @Test(
        "an invalidation through one service has reached another sharing an in-memory cache when it returns",
        arguments: Invalidation.allCases
    )
    func reachesEveryServiceInMemory(_ invalidation: Invalidation) async throws {
        let shared = InMemoryGroupsCache()
        let result = try await Self.invalidatedThroughAnother(invalidation, storeA: shared, storeB: shared)
        #expect(result.sources == ["live", "cache", "live"])
        #expect(result.callsAfter == 2)
        #expect(result.capabilities == [])
        #expect(try await shared.invalidationCount() == 1)
    }

    @Test(
        "every invalidation sets the count to a fresh value, in the script that forgets the answers (real redis-server)",
        .requires(.redisServer)
    )
    func redisCountsEachInvalidation() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store(prefix: "count")
        defer { store.close() }
        let key = Array("count:invalidations".utf8)
        // The first read creates the count at a fresh value, and reads it back after.
        let created = try #require(try await store.invalidationCount())
        #expect(RedisGroupsCache.invalidationCounts.contains(created))
        #expect(try await store.call([Array("GET".utf8), key], "GET") == .bulk(Array(String(created).utf8)))
        var seen: [UInt64] = [created]
        for invalidation in Invalidation.allCases + [.customer] {
            switch invalidation {
            case .customer: try await store.invalidate(anyTransactionID: "c1")
            case .group: try await store.invalidate(groupID: "g1")
            case .all: try await store.invalidateAll()
            }
            let count = try #require(try await store.invalidationCount())
            #expect(RedisGroupsCache.invalidationCounts.contains(count))
            #expect(!seen.contains(count))
            #expect(try await store.call([Array("GET".utf8), key], "GET") == .bulk(Array(String(count).utf8)))
            seen.append(count)
        }
        // Kept without expiry: a count that lapsed would be read missing, and created again.
        #expect(try await store.call([Array("PTTL".utf8), key], "PTTL") == .integer(-1))
        // Read with an answer in one step.
        let answer = CachedGroupsAnswer(
            kind: .groups,
            body: Array(#"{"groups":[]}"#.utf8),
            fetchedAt: Date(timeIntervalSince1970: 1_700_000_000)
        )
        try await store.setAnswer(answer, anyTransactionID: "c2", in: .sandbox, timeToLive: .seconds(60))
        let read = try await store.answerAndInvalidationCount(anyTransactionID: "c2", in: .sandbox)
        #expect(read.answer == answer)
        #expect(read.invalidationCount == seen.last)
        // With a missing count, the combined read creates it too.
        _ = try await store.call([Array("DEL".utf8), key], "DEL")
        let again = try await store.answerAndInvalidationCount(anyTransactionID: "c2", in: .sandbox)
        let recreated = try #require(again.invalidationCount)
        #expect(again.answer == answer)
        #expect(RedisGroupsCache.invalidationCounts.contains(recreated))
        #expect(!seen.contains(recreated))
        #expect(try await store.invalidationCount() == recreated)
    }

    @Test(
        "a count that is not a number is a store failure; the hit falls back to the shared answer (real redis-server)",
        .requires(.redisServer)
    )
    func malformedCount() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let clock = ManualClock(Date())
        let store = try server.store(prefix: "bad", now: clock.now)
        defer { store.close() }
        var configuration = FleetInvalidationTests.configuration
        configuration.sharedCache.health.retryInterval = .zero
        let source = StaticGroupsSource(["c": Families.member])
        let service = try ServiceHarness(
            source: source,
            sharedCache: store,
            clock: clock,
            configuration: configuration
        )
        .service
        #expect(try await service.decision(anyTransactionID: "c", environment: .sandbox).source == .live)
        _ = try await store.call([Array("SET".utf8), Array("bad:invalidations".utf8), Array("x1".utf8)], "SET")
        let error = await expectError { _ = try await store.invalidationCount() }
        #expect(error?.code == .sharedCacheFailure)
        #expect(
            error?.message == "Redis at 127.0.0.1:\(server.port): EVAL read-invalidations: an unexpected value"
        )
        let both = await expectError {
            _ = try await store.answerAndInvalidationCount(anyTransactionID: "c", in: .sandbox)
        }
        #expect(
            both?.message
                == "Redis at 127.0.0.1:\(server.port): EVAL read-answer-invalidations: an unexpected array"
        )
        // Another answer in the shared cache, written without an invalidation: the hit past the
        // check interval cannot read the count, so it reads the shared answer, and serves that one.
        try await store.setAnswer(
            CachedGroupsAnswer(kind: .groups, body: Array(#"{"groups":[]}"#.utf8), fetchedAt: clock.date),
            anyTransactionID: "c",
            in: .sandbox,
            timeToLive: .seconds(60)
        )
        clock.advance(by: configuration.sharedCache.invalidationCheckInterval)
        let served = try await service.decision(anyTransactionID: "c", environment: .sandbox)
        #expect(served.source == .cache)
        #expect(served.decision.capabilities.sorted() == [])
        #expect(source.callCount == 1)
        // An invalidation sets a fresh value in its place: the count is readable again.
        try await service.invalidate(anyTransactionID: "c")
        let count = try #require(try await store.invalidationCount())
        #expect(RedisGroupsCache.invalidationCounts.contains(count))
    }

    @Test(
        "while the shared cache cannot be read, this process serves none of its copies: refused with Retry-After, nothing sent (real redis-server)",
        .requires(.redisServer)
    )
    func storeDown() async throws {
        let server = try await RedisServer.start()
        let clock = ManualClock(Date())
        let store = try server.store(prefix: "down", now: clock.now)
        defer { store.close() }
        let source = StaticGroupsSource(["c": Families.member])
        var configuration = FleetInvalidationTests.configuration
        configuration.rateLimits.fallbackShare = 0
        let service = try ServiceHarness(
            source: source,
            sharedCache: store,
            clock: clock,
            configuration: configuration
        )
        .service
        #expect(try await service.decision(anyTransactionID: "c", environment: .sandbox).source == .live)
        #expect(try await service.decision(anyTransactionID: "c", environment: .sandbox).source == .cache)
        server.stop()
        clock.advance(by: service.configuration.sharedCache.invalidationCheckInterval)
        let refused = await expectError { _ = try await service.decision(anyTransactionID: "c", environment: .sandbox) }
        #expect(refused?.code == .rateLimitExceeded)
        #expect(refused?.retryAfter != nil)
        #expect(source.callCount == 1)
        // An invalidation cannot complete meanwhile.
        let error = await expectError { try await service.invalidate(groupID: "g1") }
        #expect(error?.code == .sharedCacheFailure)
    }

    @Test(
        "a process skipping a slow shared cache still reads the count: another's invalidation reaches it (real redis-server)",
        .requires(.redisServer),
        .timeLimit(.minutes(5))
    )
    func slowCacheSkippedStillReadsCount() async throws {
        // Process B reaches Redis through a proxy holding each command 200 ms: slow, not failing.
        let fleet = try await RedisFleet.start(proxyDelay: .milliseconds(200))
        defer { fleet.stop() }
        let storeA = try fleet.store(prefix: "slow", direct: true)
        let storeB = try fleet.store(prefix: "slow", timeout: .seconds(30))
        var configuration = GroupDecisionService.Configuration()
        // Long enough that neither the skip nor B's copy ends during the test, however busy the machine.
        configuration.sharedCache.health.retryInterval = .seconds(600)
        configuration.localCache.timeToLive = .seconds(600)
        let apple = StaticGroupsSource(["c": Families.member])
        let serviceA = try FleetInvalidationTests.service(apple, shared: storeA)
        let serviceB = try ServiceHarness(
            source: apple,
            sharedCache: storeB,
            time: .system,
            observer: RecordingObserver(),
            configuration: configuration
        )
        .service
        // B's uncached decision makes five slow calls in a row: B now skips its cache as slow.
        #expect(try await serviceB.decision(anyTransactionID: "c", environment: .sandbox).source == .live)
        apple.setAnswer(Families.noGroups, for: "c")
        // A's cache is fast: the invalidation completes, and returns after the check interval.
        try await serviceA.invalidate(anyTransactionID: "c")
        let served = try await serviceB.decision(anyTransactionID: "c", environment: .sandbox)
        #expect(served.decision.capabilities.sorted() == [])
    }

    @Test(
        "64 concurrent hits past the check interval share one read of the count (real redis-server)",
        .requires(.redisServer)
    )
    func concurrentHitsShareOneCountRead() async throws {
        let fleet = try await RedisFleet.start(proxyDelay: .zero)
        defer { fleet.stop() }
        let proxy = try #require(fleet.proxy)
        let clock = ManualClock(Date())
        let store = try fleet.store(prefix: "share", timeout: .seconds(30), now: clock.now)
        let apple = StaticGroupsSource(["c1": Families.member, "c2": Families.member])
        let service = try FleetInvalidationTests.clockedService(apple, shared: store, clock: clock)
        #expect(try await service.decision(anyTransactionID: "c1", environment: .sandbox).source == .live)
        #expect(try await service.decision(anyTransactionID: "c2", environment: .sandbox).source == .live)
        let before = proxy.roundTrips
        clock.advance(by: service.configuration.sharedCache.invalidationCheckInterval)
        let sources = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<64 {
                group.addTask {
                    try await service.decision(
                        anyTransactionID: index.isMultiple(of: 2) ? "c1" : "c2",
                        environment: .sandbox
                    )
                    .source.name
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(sources == Array(repeating: "cache", count: 64))
        #expect(proxy.roundTrips == before + 1)
        #expect(apple.callCount == 2)
    }

    @Test(
        "a process that skipped its shared cache after one failure serves none of its copies, and reads the count again once the cache is back"
    )
    func skippedAfterFailureCacheBack() async throws {
        let clock = ManualClock()
        let shared = InMemoryGroupsCache(now: clock.now)
        let throughB = ScriptedGroupsCache(shared, countsInvalidations: true)
        let apple = StaticGroupsSource(["c": Families.member])
        var configuration = FleetInvalidationTests.configuration
        configuration.rateLimits.fallbackShare = 0
        let serviceA = try FleetInvalidationTests.clockedService(apple, shared: shared, clock: clock)
        let serviceB = try ServiceHarness(
            source: apple,
            sharedCache: throughB,
            clock: clock,
            configuration: configuration
        )
        .service
        #expect(try await serviceB.decision(anyTransactionID: "c", environment: .sandbox).source == .live)
        // One read of the count fails (a timeout, a connection reset): B skips the cache for the
        // retry interval (5 seconds), and serves no copy the count does not confirm: the customer
        // is refused with Retry-After, nothing sent to Apple.
        throughB.fail(["invalidationCount"])
        clock.advance(by: serviceB.configuration.sharedCache.invalidationCheckInterval)
        let refused = await expectError {
            _ = try await serviceB.decision(anyTransactionID: "c", environment: .sandbox)
        }
        #expect(refused?.code == .rateLimitExceeded)
        #expect(apple.callCount == 1)
        // The cache answers again; through A, an invalidation completes and returns. B reads the
        // count although it still skips the cache, sees it moved, and fetches.
        throughB.fail([])
        apple.setAnswer(Families.noGroups, for: "c")
        try await serviceA.invalidate(anyTransactionID: "c")
        let served = try await serviceB.decision(anyTransactionID: "c", environment: .sandbox)
        #expect(served.source == .live)
        #expect(served.decision.capabilities.sorted() == [])
        #expect(apple.callCount == 2)
    }

    /// Service A and service B (through a cache whose calls the test fails) share an in-memory
    /// cache on one clock, with a time to live of 1 s and no refresh ahead, as the revocation storm
    /// that once printed a stale answer after an invalidation's 200 ran (`--cache-ttl 1
    /// --refresh-ahead 0`): B holds c's answer past its time to live, one of B's calls fails (a
    /// timeout on a loaded machine) so B skips the cache, and A invalidates c.
    static func staleAfterSkip(
        stillFailing: Bool
    ) async throws -> (served: Result<ServedDecision, AppStoreGroupsError>, calls: Int) {
        let clock = ManualClock()
        let shared = InMemoryGroupsCache(now: clock.now)
        let throughB = ScriptedGroupsCache(shared, countsInvalidations: true)
        let apple = StaticGroupsSource(["c": Families.member])
        var configuration = FleetInvalidationTests.configuration
        configuration.rateLimits.fallbackShare = 0
        configuration.freshness = FreshnessPolicy(timeToLive: .seconds(1))
        configuration.freshness.refreshAfter = nil
        let make = { (cache: any SharedGroupsCache) in
            try ServiceHarness(source: apple, sharedCache: cache, clock: clock, configuration: configuration).service
        }
        let serviceA = try make(shared)
        let serviceB = try make(throughB)
        #expect(try await serviceB.decision(anyTransactionID: "c", environment: .sandbox).source == .live)
        // Past the time to live, within the maximum age and the local time to live: B would serve
        // its copy stale when the budget spares no token for the refresh.
        clock.advance(by: .milliseconds(1_500))
        // One of B's calls fails: B skips the cache, and refuses a customer it holds nothing for.
        throughB.fail(["answer"])
        let refused = await expectError {
            _ = try await serviceB.decision(anyTransactionID: "other", environment: .sandbox)
        }
        #expect(refused?.code == .rateLimitExceeded)
        throughB.fail(stillFailing ? ["answer", "invalidationCount"] : [])
        apple.setAnswer(Families.noGroups, for: "c")
        try await serviceA.invalidate(anyTransactionID: "c")
        let served: Result<ServedDecision, AppStoreGroupsError>
        do {
            served = .success(try await serviceB.decision(anyTransactionID: "c", environment: .sandbox))
        } catch {
            served = .failure(error)
        }
        return (served, apple.callCount)
    }

    @Test(
        "stale serving is under the lease too: a copy past its time to live is not served stale after another's invalidation once the cache that failed answers again"
    )
    func noStaleCopyAfterSkipCacheBack() async throws {
        let result = try await Self.staleAfterSkip(stillFailing: false)
        let served = try result.served.get()
        #expect(served.source == .live)
        #expect(served.decision.capabilities.sorted() == [])
        #expect(result.calls == 2)
    }

    @Test(
        "stale serving is under the lease too: while the cache still fails, the copy past its time to live is refused, not served stale"
    )
    func noStaleCopyWhileCacheFails() async throws {
        let result = try await Self.staleAfterSkip(stillFailing: true)
        guard case .failure(let error) = result.served else {
            Issue.record("served \(result.served)")
            return
        }
        #expect(error.code == .rateLimitExceeded)
        #expect(result.calls == 1)
    }

    @Test("a local time to live of zero keeps nothing here: every decision reads the shared cache")
    func localTimeToLiveZero() async throws {
        let clock = ManualClock()
        let shared = InMemoryGroupsCache(now: clock.now)
        let apple = StaticGroupsSource(["c": Families.member])
        var configuration = FleetInvalidationTests.configuration
        configuration.localCache.timeToLive = .zero
        let make = {
            try ServiceHarness(source: apple, sharedCache: shared, clock: clock, configuration: configuration).service
        }
        let serviceA = try make()
        let serviceB = try make()
        #expect(try await serviceB.decision(anyTransactionID: "c", environment: .sandbox).source == .live)
        #expect(try await serviceB.decision(anyTransactionID: "c", environment: .sandbox).source == .cache)
        apple.setAnswer(Families.noGroups, for: "c")
        try await serviceA.invalidate(anyTransactionID: "c")
        // No clock move: a copy kept here would be confirmed by B's reading made at its first decision.
        let served = try await serviceB.decision(anyTransactionID: "c", environment: .sandbox)
        #expect(served.source == .live)
        #expect(served.decision.capabilities.sorted() == [])
    }

    @Test(
        "a hit within the check interval makes no round trip; one after it reads the count alone (real redis-server)",
        .requires(.redisServer)
    )
    func hitRoundTrips() async throws {
        let fleet = try await RedisFleet.start(proxyDelay: .zero)
        defer { fleet.stop() }
        let proxy = try #require(fleet.proxy)
        let clock = ManualClock(Date())
        let store = try fleet.store(prefix: "trips", timeout: .seconds(30), now: clock.now)
        let source = StaticGroupsSource(["c": Families.member])
        let service = try FleetInvalidationTests.clockedService(source, shared: store, clock: clock)
        #expect(try await service.decision(anyTransactionID: "c", environment: .sandbox).source == .live)
        #expect(proxy.roundTrips == 5)
        for _ in 0..<3 {
            #expect(try await service.decision(anyTransactionID: "c", environment: .sandbox).source == .cache)
        }
        #expect(proxy.roundTrips == 5)
        clock.advance(by: service.configuration.sharedCache.invalidationCheckInterval)
        #expect(try await service.decision(anyTransactionID: "c", environment: .sandbox).source == .cache)
        #expect(proxy.roundTrips == 6)
        #expect(try await service.decision(anyTransactionID: "c", environment: .sandbox).source == .cache)
        #expect(proxy.roundTrips == 6)
        #expect(source.callCount == 1)
    }

    @Test("the check interval is validated: positive, at most the local time to live")
    func configurationValidation() throws {
        func problem(_ configure: (inout GroupDecisionService.Configuration) -> Void) -> String? {
            do {
                _ = try ServiceHarness(source: StaticGroupsSource([:]), configure: configure)
                return nil
            } catch let error as AppStoreGroupsError {
                #expect(error.code == .invalidConfiguration)
                return error.message
            } catch {
                Issue.record(error)
                return nil
            }
        }
        #expect(GroupDecisionService.Configuration().sharedCache.invalidationCheckInterval == .milliseconds(250))
        #expect(
            problem { $0.sharedCache.invalidationCheckInterval = .zero }
                == "sharedCache.invalidationCheckInterval must be positive"
        )
        #expect(
            problem { $0.sharedCache.invalidationCheckInterval = .milliseconds(-1) }
                == "sharedCache.invalidationCheckInterval must be positive"
        )
        #expect(
            problem { $0.sharedCache.invalidationCheckInterval = .milliseconds(5_001) }
                == "sharedCache.invalidationCheckInterval must be at most localCache.timeToLive"
        )
        #expect(problem { $0.sharedCache.invalidationCheckInterval = .seconds(5) } == nil)
        // Nothing is kept here with a local time to live of zero: any positive interval will do.
        #expect(problem { $0.localCache.timeToLive = .zero } == nil)
    }

    @Test("an invalidation waits the check interval on the service's clock; none without a shared cache")
    func invalidationWaits() async throws {
        let clock = ManualClock()
        let shared = InMemoryGroupsCache(now: clock.now)
        let source = StaticGroupsSource(["c": Families.member])
        let service = try FleetInvalidationTests.clockedService(source, shared: shared, clock: clock)
        try await service.invalidate(anyTransactionID: "c")
        try await service.invalidate(groupID: "g1")
        try await service.invalidateAll()
        #expect(clock.sleeps == Array(repeating: .milliseconds(250), count: 3))
        let alone = ManualClock()
        let solo = try FleetInvalidationTests.clockedService(source, shared: nil, clock: alone)
        try await solo.invalidate(anyTransactionID: "c")
        #expect(alone.sleeps == [])
        // A shared cache that keeps no count: no wait, as before the count existed.
        let legacy = ManualClock()
        let old = try FleetInvalidationTests.clockedService(source, shared: ScriptedGroupsCache(), clock: legacy)
        try await old.invalidate(anyTransactionID: "c")
        #expect(legacy.sleeps == [])
    }
}
