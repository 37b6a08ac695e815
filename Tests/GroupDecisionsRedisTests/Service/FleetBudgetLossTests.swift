import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// A fleet budget the store lost (a flush, a `DEL` of the key, an eviction) costs the fleet at most
/// one burst.
///
/// A lost bucket forgets the tokens reserved by callers still waiting for them, at most the rate
/// times the longest wait; a new bucket starts with the burst less those, so the two together send
/// one burst. Four services, each with a store of its own on one real redis-server, decide
/// customers nobody asked for until the budget refuses them: every decision needs Apple, and the
/// source counts what reached it. The rate is 1/128 of a token a second, so no token comes back
/// during a test, and the longest wait, 672 s on a manual clock (a reserved token's wait passes at
/// once), holds 5.25 tokens of reservations: a burst of 10 starts a bucket with 4.75, and takes
/// 4 at once and 6 reserved, 10 in all. A bucket started full took 10 and 5 reserved: 15.
@Suite("Rate limit: a budget the store lost costs the fleet at most one burst")
struct FleetBudgetLossTests {
    static let rate = 1.0 / 128
    static let burst = 10.0

    static var configuration: GroupDecisionService.Configuration {
        var configuration = GroupDecisionService.Configuration()
        configuration.rateLimits.requestsPerSecond = [.sandbox: rate, .production: rate]
        configuration.rateLimits.requestBurst = [.sandbox: burst]
        configuration.rateLimits.maximumRateLimitWait = .seconds(672)
        configuration.sharedCache.health.slowCallsInARow = 0
        return configuration
    }

    /// Four services on `stores`, their sleeps on `clock`, their requests to `apple`.
    static func fleet(
        _ stores: [any SharedGroupsCache],
        apple: StubGroupsSource,
        clock: ManualClock
    ) throws -> [GroupDecisionService] {
        try stores.map { store in
            try ServiceHarness(source: apple, sharedCache: store, clock: clock, configuration: configuration).service
        }
    }

    /// Decides `attempts` new customers, in turn through each service: how many were served (each
    /// one request to Apple); every other must be refused for the budget.
    static func spend(_ services: [GroupDecisionService], round: String, attempts: Int = 30) async -> Int {
        var served = 0
        for index in 0..<attempts {
            do {
                let decision = try await services[index % services.count].decision(
                    anyTransactionID: "\(round)_\(index)",
                    environment: .sandbox
                )
                #expect(decision.source == .live)
                served += 1
            } catch {
                #expect(error.code == .rateLimitExceeded)
                #expect(error.httpStatus == nil)
            }
        }
        return served
    }

    /// How the store loses the fleet's budget.
    enum Loss: String, CaseIterable, CustomTestStringConvertible {
        /// `DEL` of the budget key, as an eviction or an operator would.
        case deleted
        /// `FLUSHALL`: the whole store, as a restart without persistence.
        case flushed

        var testDescription: String { rawValue }

        func apply(to store: RedisGroupsCache) async throws {
            switch self {
            case .deleted:
                _ = try await store.call(
                    [Array("DEL".utf8), store.budgetKey(.customerGroups, .sandbox)],
                    "DEL budget"
                )
            case .flushed:
                _ = try await store.call([Array("FLUSHALL".utf8)], "FLUSHALL")
            }
        }
    }

    @Test(
        "a cold fleet sends one burst, and each loss of the budget key one more, never more (real redis-server)",
        .requires(.redisServer),
        arguments: Loss.allCases
    )
    func lossCostsOneBurstRedis(_ loss: Loss) async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let clock = ManualClock(Date())
        let stores = try (0..<4).map { _ in try server.store(prefix: "loss", now: clock.now) }
        defer { for store in stores { store.close() } }
        let apple = StubGroupsSource(clock: clock.now)
        let services = try Self.fleet(stores, apple: apple, clock: clock)
        // A cold fleet: the new bucket's 4.75 tokens and the reservations, one burst.
        #expect(await Self.spend(services, round: "cold") == 10)
        #expect(apple.requests.count == 10)
        // Spent: nothing more goes while the bucket holds.
        #expect(await Self.spend(services, round: "spent") == 0)
        // Each loss lets one more burst through, three losses three.
        for round in 1...3 {
            try await loss.apply(to: stores[round])
            #expect(await Self.spend(services, round: "lost\(round)") == 10)
            #expect(await Self.spend(services, round: "after\(round)") == 0)
        }
        #expect(apple.requests.count == 40)
    }

    @Test("a budget the in-memory cache forgot costs one burst too")
    func lossCostsOneBurstInMemory() async throws {
        let clock = ManualClock()
        // The cache's own clock stands still, as Redis's barely moves: the services' waits for
        // reserved tokens pass on theirs without refilling the bucket.
        let start = clock.date
        let shared = InMemoryGroupsCache(now: { start })
        let apple = StubGroupsSource(clock: clock.now)
        let services = try Self.fleet(Array(repeating: shared, count: 4), apple: apple, clock: clock)
        #expect(await Self.spend(services, round: "cold") == 10)
        #expect(await Self.spend(services, round: "spent") == 0)
        shared.removeBudget(.customerGroups, in: .sandbox)
        #expect(await Self.spend(services, round: "lost") == 10)
        #expect(await Self.spend(services, round: "after") == 0)
        #expect(apple.requests.count == 20)
    }

    @Test(
        "the initial tokens: a new bucket starts with them, in Redis and in memory (real redis-server)",
        .requires(.redisServer)
    )
    func initialTokens() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store(prefix: "initial")
        defer { store.close() }
        let memory = InMemoryGroupsCache()
        let budget = FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: 0.001, burst: 5, initialTokens: 2)
        #expect(budget.initialTokens == 2)
        #expect(FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: 1, burst: 5).initialTokens == 5)
        for cache in [store, memory] as [any SharedGroupsCache] {
            var taken = 0
            for _ in 0..<5
            where try await cache.takeBudgetToken(from: budget, maximumWait: .zero) == .taken(wait: .zero) {
                taken += 1
            }
            #expect(taken == 2)
        }
        // Out of range: refused by Redis, nothing taken.
        for initial in [-1, 6, Double.nan] {
            let wrong = FleetBudget(.groupMembers, in: .sandbox, ratePerSecond: 1, burst: 5, initialTokens: initial)
            let error = await expectError { _ = try await store.takeBudgetToken(from: wrong, maximumWait: .zero) }
            #expect(error?.code == .invalidArgument)
        }
    }

    @Test("the service starts a fleet bucket with the burst less the rate times the longest wait, never below 0")
    func serviceChoosesInitialTokens() async throws {
        // After one request through the gate, what is left at once in the bucket it started: the
        // initial tokens less one, rounded down.
        for (wait, left) in [(Duration.seconds(672), 3), (.zero, 9), (.seconds(10_000), 0)] {
            var configuration = Self.configuration.rateLimits
            configuration.maximumRateLimitWait = wait
            let clock = ManualClock()
            let shared = InMemoryGroupsCache(now: clock.now)
            let gate = try RateLimitGate(
                configuration: configuration,
                sharedCaches: SharedCaches(shared),
                timeSource: clock.timeSource
            )
            try await gate.send(.customerGroups, in: .sandbox) { () throws(AppStoreGroupsError) in }
            let budget = FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: Self.rate, burst: Self.burst)
            var taken = 0
            while try await shared.takeBudgetToken(from: budget, maximumWait: .zero) == .taken(wait: .zero) {
                taken += 1
            }
            #expect(taken == left, "waiting at most \(wait)")
        }
    }
}
