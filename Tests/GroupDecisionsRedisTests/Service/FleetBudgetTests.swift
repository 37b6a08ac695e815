import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// One request budget for the fleet.
///
/// With a shared cache, every process takes its tokens from one bucket in the cache; while the cache fails, each keeps
/// to its share (none by default); without one, each has its own. The rate is so low (one token in 100 seconds) that no
/// token comes back during a test, so every count is exact.
@Suite("Rate limit: one budget for the fleet")
struct FleetBudgetTests {
    /// A sandbox budget of 0.01 a second with a burst of `burst`, no wait for a token, and the fleet's
    /// shared cache never skipped as slow (a busy machine makes every call slow).
    static func service(
        _ source: StaticGroupsSource,
        _ shared: (any SharedGroupsCache)?,
        burst: Double,
        fallbackShare: Double = 0
    ) throws -> GroupDecisionService {
        try fleetService(source, shared) {
            $0.rateLimits.fallbackShare = fallbackShare
            $0.rateLimits.requestsPerSecond = [.sandbox: 0.01, .production: 0.01]
            $0.rateLimits.requestBurst = [.sandbox: burst]
            $0.rateLimits.maximumRateLimitWait = .zero
        }
    }

    /// Sends `attempts` requests through each service's gate in turn: how many went, and the messages of the refusals.
    static func send(_ attempts: Int, through services: [GroupDecisionService]) async -> (Int, Set<String>) {
        var sent = 0
        var refusals: Set<String> = []
        for _ in 0..<attempts {
            for service in services {
                do {
                    try await service.rateLimitGate.send(.customerGroups, in: .sandbox) {
                        () throws(AppStoreGroupsError) in
                    }
                    sent += 1
                } catch {
                    #expect(error.code == .rateLimitExceeded)
                    #expect(error.httpStatus == nil)
                    refusals.insert(error.message)
                }
            }
        }
        return (sent, refusals)
    }

    static let fleetSpent = "the fleet's budget of 0.01 customer-groups requests a second is spent; none was sent"

    @Test(
        "two services sharing one cache take the fleet's burst once, not once each; Get Group Members has a bucket of its own",
        .requires(.redisServer),
        arguments: SharedStore.allCases
    )
    func twoServicesShareOneBudget(_ store: SharedStore) async throws {
        let (first, second, server) = try await store.pair(prefix: "budget")
        defer { server?.stop() }
        let apple = StaticGroupsSource(Families.customers(10))
        let services = [try Self.service(apple, first, burst: 3), try Self.service(apple, second, burst: 3)]
        var refusals: [String] = []
        for index in 0..<10 {
            do {
                _ = try await services[index % 2].decide("c\(index)")
            } catch let error as AppStoreGroupsError {
                #expect(error.code == .rateLimitExceeded)
                refusals.append(error.message)
            }
        }
        #expect(refusals == Array(repeating: Self.fleetSpent, count: 7))
        #expect(apple.callCount == 3)
        let (sent, more) = await Self.send(5, through: services)
        #expect(sent == 0)
        #expect(more == [Self.fleetSpent])
        let members = FleetBudget(.groupMembers, in: .sandbox, ratePerSecond: 0.01, burst: 3)
        #expect(try await first.takeBudgetToken(from: members, maximumWait: .zero) == .taken(wait: .zero))
    }

    @Test("without a shared cache, each service has the whole budget to itself")
    func withoutSharedCacheEachProcessHasItsOwn() async throws {
        let apple = StaticGroupsSource(Families.customers(1))
        let services = [try Self.service(apple, nil, burst: 3), try Self.service(apple, nil, burst: 3)]
        let (sent, refusals) = await Self.send(5, through: services)
        #expect(sent == 6)
        #expect(refusals == ["this process's budget of 0.01 customer-groups requests a second is spent; none was sent"])
    }

    /// Before, each cut-off service spent a quarter of the budget of its own while the others kept
    /// drawing the whole of it from Redis (1.25 × R with one of four cut off).
    @Test(
        "four services, one to four cut off from Redis: the fleet sends exactly the burst, the cut-off ones nothing beyond what Redis granted, or with a fallback share, that share of the fleet's budget each",
        .requires(.redisServer),
        arguments: [(1, 0), (2, 0), (3, 0), (4, 0), (4, 0.25)] as [(Int, Double)]
    )
    func partialFailureKeepsTheBudget(cutOff: Int, fallbackShare: Double) async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        // Nothing listens on the cut-off services' port: every call they make to Redis fails.
        let dead = try LoopbackSocket(refusing: ())
        defer { withExtendedLifetime(dead) {} }
        let apple = StaticGroupsSource(Families.customers(1))
        let services = try (0..<4).map { index in
            let cache =
                index < cutOff
                ? try dead.store(prefix: "partial", timeout: .milliseconds(500))
                : try server.store(prefix: "partial")
            return try Self.service(apple, cache, burst: 8, fallbackShare: fallbackShare)
        }
        let (sent, refusals) = await Self.send(10, through: services)
        if fallbackShare > 0 {
            // A quarter of a burst of 8 each: 2 each, never unlimited.
            #expect(sent == 8)
            #expect(
                refusals == [
                    "this process's share (0.0025 a second) of the fleet's budget of 0.01 customer-groups requests "
                        + "a second, kept while the shared cache is unavailable, is spent; none was sent"
                ]
            )
            return
        }
        #expect(sent == (cutOff == 4 ? 0 : 8))
        #expect(
            refusals.contains(
                "the shared cache that keeps the fleet's budget of 0.01 customer-groups requests a second is "
                    + "unavailable, and this process sends nothing beyond what it granted; none was sent"
            )
        )
        #expect(refusals.count == (cutOff == 4 ? 1 : 2))
    }

    @Test(
        "Redis's bucket lives a day after its last token, longer than a refill and the longest wait, so a quiet spell ends with a full bucket; its initial tokens default to the burst, and out of range they are refused by Redis, as a negative reserve is",
        .requires(.redisServer)
    )
    func redisBucket() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store(prefix: "bucket")
        // The bucket's tokens and waits, and a new bucket starting with its initial tokens, are the
        // conformance suite's; its key, lifetime and refusals are Redis's.
        let budget = FleetBudget(.customerGroups, in: .production, ratePerSecond: 0.001, burst: 2)
        #expect(try await store.takeBudgetToken(from: budget, maximumWait: .seconds(1_500)) == .taken(wait: .zero))
        let key = store.budgetKey(.customerGroups, .production)
        #expect(String(decoding: key, as: UTF8.self) == "bucket:Production:budget:customer-groups")
        let lifetime = try await store.millisecondsToLive(key)
        #expect(lifetime.map { $0 > 86_300_000 && $0 <= 86_400_000 } == true)
        #expect(
            FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: 0.001, burst: 5, initialTokens: 2).initialTokens
                == 2
        )
        #expect(FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: 1, burst: 5).initialTokens == 5)
        // Out of range: refused by Redis, nothing taken.
        for initial in [-1, 6, Double.nan] {
            let wrong = FleetBudget(.groupMembers, in: .sandbox, ratePerSecond: 1, burst: 5, initialTokens: initial)
            let error = await expectError { _ = try await store.takeBudgetToken(from: wrong, maximumWait: .zero) }
            #expect(error?.code == .invalidArgument)
        }
        // A negative reserve kept from refreshes is refused too.
        let refresh = FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: 1, burst: 5)
        #expect(
            await expectError { try await store.takeBudgetToken(from: refresh, keeping: -1) }?.code == .invalidArgument
        )
    }

    @Test(
        "a configuration with a burst below 1 or a share outside [0, 1] is refused",
        arguments: [(0.5, 0.25), (2, -0.1), (2, 1.5), (.infinity, 0.25), (2, .nan)] as [(Double, Double)]
    )
    func configurationBounds(burst: Double, share: Double) throws {
        #expect(throws: AppStoreGroupsError.self) {
            try ServiceHarness(source: StaticGroupsSource([:]), time: .system) {
                $0.rateLimits.requestBurst = [.production: burst]
                $0.rateLimits.fallbackShare = share
            }
        }
    }

    // MARK: A budget the store lost

    /// How the store loses the fleet's budget.
    enum Loss: String, CaseIterable, Sendable {
        /// `DEL` of the budget key, as an eviction or an operator would.
        case deleted
        /// `FLUSHALL`: the whole store, as a restart without persistence.
        case flushed
        /// The in-memory cache forgets the bucket.
        case forgottenInMemory
    }

    // A lost bucket forgets the tokens reserved by callers still waiting for them, at most the rate times the longest
    // wait; a new bucket starts with the burst less those, so the two together send one burst. Four services decide
    // customers nobody asked for until the budget refuses them: every decision needs Apple, and the source counts what
    // reached it. The rate is 1/128 of a token a second, so no token comes back during a test, and the longest wait,
    // 672 s on a manual clock (a reserved token's wait passes at once), holds 5.25 reserved tokens: a burst of 10
    // starts a bucket with 4.75, taking 4 at once and 6 reserved, 10 in all; one started full took 15 (10, 5 reserved).
    @Test(
        "a cold fleet sends one burst, and each loss of the budget key one more, never more",
        .requires(.redisServer),
        arguments: Loss.allCases
    )
    func lossCostsOneBurst(_ loss: Loss) async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let clock = ManualClock(Date())
        // The in-memory cache's own clock stands still, as Redis's barely moves: the services' waits
        // for reserved tokens pass on theirs without refilling the bucket.
        let start = clock.date
        let memory = InMemoryGroupsCache(now: { start })
        let stores: [any SharedGroupsCache] =
            loss == .forgottenInMemory
            ? Array(repeating: memory, count: 4)
            : try (0..<4).map { _ in try server.store(prefix: "loss", now: clock.now) }
        let apple = StubGroupsSource(clock: clock.now)
        let services = try stores.map { store in
            try ServiceHarness(source: apple, sharedCache: store, clock: clock) {
                $0.rateLimits.requestsPerSecond = [.sandbox: 1.0 / 128, .production: 1.0 / 128]
                $0.rateLimits.requestBurst = [.sandbox: 10]
                $0.rateLimits.maximumRateLimitWait = .seconds(672)
                $0.sharedCache.health.slowCallsInARow = 0
            }
            .service
        }
        /// Decides 30 new customers in turn through each service: how many were served (each one
        /// request to Apple); every other must be refused for the budget.
        func spend(_ round: String) async throws -> Int {
            var served = 0
            for index in 0..<30 {
                do {
                    #expect(try await services[index % 4].decide("\(round)_\(index)").source == .live)
                    served += 1
                } catch let error as AppStoreGroupsError {
                    #expect(error.code == .rateLimitExceeded)
                    #expect(error.httpStatus == nil)
                }
            }
            return served
        }
        // A cold fleet: the new bucket's 4.75 tokens and the reservations, one burst; then spent.
        #expect(try await spend("cold") == 10)
        #expect(apple.requests.count == 10)
        #expect(try await spend("spent") == 0)
        // Each loss lets one more burst through, three losses three.
        for round in 1...3 {
            switch loss {
            case .deleted:
                let store = try #require(stores[round] as? RedisGroupsCache)
                _ = try await store.call([Array("DEL".utf8), store.budgetKey(.customerGroups, .sandbox)], "DEL")
            case .flushed: try await (stores[round] as? RedisGroupsCache)?.send(["FLUSHALL"])
            case .forgottenInMemory: memory.removeBudget(.customerGroups, in: .sandbox)
            }
            #expect(try await spend("lost\(round)") == 10)
            #expect(try await spend("after\(round)") == 0)
        }
        #expect(apple.requests.count == 40)
    }

    @Test(
        "the service starts a fleet bucket with the burst less the rate times the longest wait, never below 0",
        arguments: [(Duration.seconds(672), 3), (.zero, 9), (.seconds(10_000), 0)]
    )
    func serviceChoosesInitialTokens(longestWait: Duration, left: Int) async throws {
        // After one request through the gate, what is left at once in the bucket it started: the
        // initial tokens less one, rounded down.
        var configuration = GroupDecisionService.Configuration().rateLimits
        configuration.requestsPerSecond = [.sandbox: 1.0 / 128, .production: 1.0 / 128]
        configuration.requestBurst = [.sandbox: 10]
        configuration.maximumRateLimitWait = longestWait
        let clock = ManualClock()
        let shared = InMemoryGroupsCache(now: clock.now)
        let gate = try RateLimitGate(
            configuration: configuration,
            sharedCaches: SharedCaches(shared),
            timeSource: clock.timeSource
        )
        try await gate.send(.customerGroups, in: .sandbox) { () throws(AppStoreGroupsError) in }
        let budget = FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: 1.0 / 128, burst: 10)
        var taken = 0
        while try await shared.takeBudgetToken(from: budget, maximumWait: .zero) == .taken(wait: .zero) { taken += 1 }
        #expect(taken == left)
    }

    @Test(
        "two servers on one Redis: an expired answer is served stale while the fleet's budget is low, a new customer gets the reserve",
        .requires(.redisServer)
    )
    func staleOnFleetBudget() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let clock = ManualClock()
        let (storeA, storeB) = try server.pair(prefix: "fleet", now: clock.now)
        let source = StaticGroupsSource(Families.customers(20))
        let harness = try ServiceHarness(
            source: source,
            sharedCache: storeA,
            clock: clock,
            configuration: .exactCounts()
        )
        let first = harness.service
        let second = try harness.another(sharedCache: storeB, configuration: .exactCounts()).service
        // Burst 5, reserve 1: the two servers' four first fetches leave the reserve.
        for index in 0..<4 {
            #expect(
                try await (index.isMultiple(of: 2) ? first : second).decide("c\(index)").source == .live
            )
        }
        clock.advance(by: .seconds(400))
        for service in [first, second] {
            let stale = try await service.decide("c0")
            #expect(stale.source == .stale)
            #expect(stale.staleReason == .budget)
            #expect(stale.age == .seconds(400))
        }
        #expect(try await second.decide("c10").source == .live)
        #expect(await expectError { try await first.decide("c11") }?.code == .rateLimitExceeded)
        // After an invalidation, nothing of the old answer: a first fetch, refused with the budget spent.
        try await first.invalidate(anyTransactionID: "c1")
        #expect(await expectError { try await second.decide("c1") }?.code == .rateLimitExceeded)
        #expect(source.callCount == 5)
    }
}
