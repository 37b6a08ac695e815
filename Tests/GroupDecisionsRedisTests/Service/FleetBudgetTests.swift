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
/// With a shared cache, every process takes its tokens from one bucket in the cache; while the
/// cache fails, each keeps to its share; without one, each has its own. The rate is so low (one token in 100 seconds) that no token comes back during a test, so
/// every count is exact.
@Suite("Rate limit: one budget for the fleet")
struct FleetBudgetTests {
    /// A sandbox budget of 0.01 a second with a burst of `burst`, no wait for a token, and a shared
    /// cache never skipped as slow (a busy machine makes every call slow).
    static func configuration(burst: Double, fallbackShare: Double = 0) -> GroupDecisionService.Configuration {
        var configuration = GroupDecisionService.Configuration()
        configuration.rateLimits.fallbackShare = fallbackShare
        configuration.rateLimits.requestsPerSecond = [.sandbox: 0.01, .production: 0.01]
        configuration.rateLimits.requestBurst = [.sandbox: burst]
        configuration.rateLimits.maximumRateLimitWait = .zero
        configuration.sharedCache.health.slowCallsInARow = 0
        return configuration
    }

    static func customers(_ count: Int) -> [String: GetCustomerGroupsResponse] {
        Dictionary(uniqueKeysWithValues: (0..<count).map { ("c\($0)", Families.member) })
    }

    static func service(
        _ source: StaticGroupsSource,
        shared: (any SharedGroupsCache)?,
        burst: Double,
        fallbackShare: Double = 0
    ) throws -> GroupDecisionService {
        try ServiceHarness(
            source: source,
            sharedCache: shared,
            time: .system,
            configuration: configuration(burst: burst, fallbackShare: fallbackShare)
        )
        .service
    }

    /// Sends `attempts` requests through each service's gate in turn: how many went, and the
    /// messages of the refusals.
    static func send(
        _ attempts: Int,
        through services: [GroupDecisionService]
    ) async -> (sent: Int, refusals: Set<String>) {
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

    @Test("two services sharing one Redis take the fleet's burst once, not once each", .requires(.redisServer))
    func twoServicesShareOneBudgetRedis() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let first = try server.store(prefix: "budget")
        let second = try server.store(prefix: "budget")
        defer {
            first.close()
            second.close()
        }
        let apple = StaticGroupsSource(Self.customers(10))
        let services = [
            try Self.service(apple, shared: first, burst: 3), try Self.service(apple, shared: second, burst: 3),
        ]
        var served = 0
        var refused = 0
        for index in 0..<10 {
            do {
                _ = try await services[index % 2].decision(anyTransactionID: "c\(index)", environment: .sandbox)
                served += 1
            } catch {
                #expect(error.code == .rateLimitExceeded)
                #expect(error.message.contains("the fleet's budget of 0.01 customer-groups requests a second"))
                refused += 1
            }
        }
        #expect(served == 3)
        #expect(refused == 7)
        #expect(apple.callCount == 3)
        // Get Group Members has a fleet budget of its own.
        let members = await Self.send(5, through: services)
        #expect(members.sent == 0)
        let own = try await first.takeBudgetToken(
            from: FleetBudget(.groupMembers, in: .sandbox, ratePerSecond: 0.01, burst: 3),
            maximumWait: .zero
        )
        #expect(own == .taken(wait: .zero))
    }

    @Test("two services sharing one in-memory cache take the fleet's burst once")
    func twoServicesShareOneBudgetInMemory() async throws {
        let shared = InMemoryGroupsCache()
        let apple = StaticGroupsSource(Self.customers(1))
        let services = [
            try Self.service(apple, shared: shared, burst: 3), try Self.service(apple, shared: shared, burst: 3),
        ]
        let result = await Self.send(5, through: services)
        #expect(result.sent == 3)
        #expect(
            result.refusals == [
                "the fleet's budget of 0.01 customer-groups requests a second is spent; none was sent"
            ]
        )
    }

    @Test(
        "with a fallback share, a Redis that fails leaves each service that share of the fleet's budget",
        .requires(.redisServer)
    )
    func failingRedisFallsBackToTheShare() async throws {
        let server = try await RedisServer.start()
        let first = try server.store(prefix: "budget", timeout: .milliseconds(500))
        let second = try server.store(prefix: "budget", timeout: .milliseconds(500))
        defer {
            first.close()
            second.close()
        }
        server.stop()
        let apple = StaticGroupsSource(Self.customers(1))
        let services = [
            try Self.service(apple, shared: first, burst: 8, fallbackShare: 0.25),
            try Self.service(apple, shared: second, burst: 8, fallbackShare: 0.25),
        ]
        // A quarter of a burst of 8 each: 2 and 2, never unlimited.
        let result = await Self.send(10, through: services)
        #expect(result.sent == 4)
        #expect(
            result.refusals == [
                "this process's share (0.0025 a second) of the fleet's budget of 0.01 customer-groups requests "
                    + "a second, kept while the shared cache is unavailable, is spent; none was sent"
            ]
        )
    }

    @Test("without a shared cache, each service has the whole budget to itself")
    func withoutSharedCacheEachProcessHasItsOwn() async throws {
        let apple = StaticGroupsSource(Self.customers(1))
        let services = [
            try Self.service(apple, shared: nil, burst: 3), try Self.service(apple, shared: nil, burst: 3),
        ]
        let result = await Self.send(5, through: services)
        #expect(result.sent == 6)
        #expect(
            result.refusals == [
                "this process's budget of 0.01 customer-groups requests a second is spent; none was sent"
            ]
        )
    }

    @Test(
        "Redis's bucket: the burst, then the wait for the next token, a reservation, and a TTL",
        .requires(.redisServer)
    )
    func redisBucket() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store(prefix: "bucket")
        defer { store.close() }
        func take(_ wait: Duration) async throws -> FleetBudgetToken {
            try await store.takeBudgetToken(
                from: FleetBudget(.customerGroups, in: .production, ratePerSecond: 0.001, burst: 2),
                maximumWait: wait
            )
        }
        // The bucket refills from its first take: a wait is 1,000 (or 2,000) seconds less the time
        // since, which this test measures instead of assuming a quiet machine (a run under two busy
        // loops took 93 s over these calls, enough to refill half a token at 0.01 a second).
        let start = ContinuousClock.now
        func since() -> Duration { ContinuousClock.now - start + .milliseconds(500) }
        #expect(try await take(.zero) == .taken(wait: .zero))
        #expect(try await take(.zero) == .taken(wait: .zero))
        guard case .notTaken(let wait) = try await take(.seconds(10)) else {
            Issue.record("a token was taken beyond the burst")
            return
        }
        #expect(wait >= .seconds(1_000) - since() && wait <= .seconds(1_000))
        // Willing to wait for it: it is reserved, and the one after is 2,000 seconds away.
        guard case .taken(let reserved) = try await take(.seconds(1_500)) else {
            Issue.record("the next token was not reserved")
            return
        }
        #expect(reserved >= .seconds(1_000) - since() && reserved <= .seconds(1_000))
        guard case .notTaken(let after) = try await take(.seconds(1_500)) else {
            Issue.record("a second token was reserved")
            return
        }
        #expect(after >= .seconds(2_000) - since() && after <= .seconds(2_000))
        // The key lives a day after the last token: longer than a full refill (2,000 s) and the
        // caller's longest wait (1,500 s), so a quiet spell ends with a full bucket.
        let key = store.budgetKey(.customerGroups, .production)
        #expect(String(decoding: key, as: UTF8.self) == "bucket:Production:budget:customer-groups")
        guard case .integer(let lifetime) = try await store.call([Array("PTTL".utf8), key], "PTTL") else {
            Issue.record("no TTL")
            return
        }
        #expect(lifetime > 86_300_000 && lifetime <= 86_400_000)
        // Another environment has a bucket of its own.
        let sandbox = try await store.takeBudgetToken(
            from: FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: 0.01, burst: 2),
            maximumWait: .zero
        )
        #expect(sandbox == .taken(wait: .zero))
    }

    @Test("a configuration with a burst below 1 or a share outside [0, 1] is refused")
    func configurationBounds() throws {
        for (burst, share) in [(0.5, 0.25), (2, -0.1), (2, 1.5), (Double.infinity, 0.25), (2, Double.nan)] {
            var configuration = GroupDecisionService.Configuration()
            configuration.rateLimits.requestBurst = [.production: burst]
            configuration.rateLimits.fallbackShare = share
            #expect(throws: AppStoreGroupsError.self) {
                try ServiceHarness(source: StaticGroupsSource([:]), time: .system, configuration: configuration).service
            }
        }
    }
}
