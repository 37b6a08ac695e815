import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// Refreshes behind first fetches, and stale answers, on a real redis-server: the reserve is kept by
/// the Lua budget script on Redis's clock, for every process sharing the store.
@Suite("Freshness on a real redis-server")
struct RedisFreshnessTests {
    @Test("the budget script keeps the reserve for first fetches", .requires(.redisServer))
    func scriptKeepsReserve() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store(prefix: "reserve")
        defer { store.close() }
        func refresh() async throws -> FleetBudgetToken {
            try await store.takeBudgetToken(
                from: FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: 0.0001, burst: 5),
                keeping: 1
            )
        }
        let started = ContinuousClock.now
        for _ in 0..<4 { #expect(try await refresh() == .taken(wait: .zero)) }
        // One banked, the reserve: refused, with the wait until two would be banked.
        guard case .notTaken(let wait) = try await refresh() else {
            Issue.record("a refresh took the reserve")
            return
        }
        // The bucket fills on Redis's clock while the test runs (a busy machine took seconds between
        // these calls): the wait is 10,000 s less what accrued since the first call, rounded up.
        let elapsed = ContinuousClock.now - started
        #expect(wait >= .seconds(9_999) - elapsed && wait <= .seconds(10_000))
        // A first fetch takes it.
        let first = try await store.takeBudgetToken(
            from: FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: 0.0001, burst: 5),
            maximumWait: .zero
        )
        #expect(first == .taken(wait: .zero))
        let invalid = await expectError {
            try await store.takeBudgetToken(
                from: FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: 1, burst: 5),
                keeping: -1
            )
        }
        #expect(invalid?.code == .invalidArgument)
    }

    @Test(
        "two servers on one Redis: an expired answer is served stale while the fleet's budget is low, a new customer gets the reserve",
        .requires(.redisServer)
    )
    func staleOnFleetBudget() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let clock = ManualClock()
        let firstStore = try server.store(prefix: "fleet", now: clock.now)
        let secondStore = try server.store(prefix: "fleet", now: clock.now)
        defer {
            firstStore.close()
            secondStore.close()
        }
        let source = StaticGroupsSource(Families.customers(20))
        let harness = try ServiceHarness(
            source: source,
            sharedCache: firstStore,
            clock: clock,
            configuration: .exactCounts()
        )
        let first = harness.service
        let second = try harness.another(sharedCache: secondStore, configuration: .exactCounts()).service
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
        let refused = await expectError { try await first.decide("c11") }
        #expect(refused?.code == .rateLimitExceeded)
        // After an invalidation, nothing of the old answer: a first fetch, refused with the budget spent.
        try await first.invalidate(anyTransactionID: "c1")
        let gone = await expectError { try await second.decide("c1") }
        #expect(gone?.code == .rateLimitExceeded)
        #expect(source.callCount == 5)
    }
}
