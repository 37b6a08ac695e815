import Foundation
import GroupDecisions
import GroupDecisionsTesting
import ServingTestSupport
import Testing

@testable import GroupDecisionsRedis

/// The fleet's budget holds when some services, not all, lose Redis.
///
/// A service cut off from it sends nothing beyond what Redis granted, so the fleet's sum stays
/// within the budget, however many are cut off. Before, each cut-off service spent a quarter of the budget of its own while the
/// others kept drawing the whole of it from Redis (1.25 × R with one of four cut off).
@Suite("Fleet budget: some services cut off from a real redis-server")
struct FleetBudgetPartialFailureTests {
    @Test(
        "four services, one, two or three cut off: the fleet sends exactly the burst, no more",
        .requires(.redisServer),
        arguments: [1, 2, 3]
    )
    func partialFailureKeepsTheBudget(cutOff: Int) async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        // Nothing listens on the cut-off services' port: every call they make to Redis fails.
        let dead = try LoopbackSocket(refusing: ())
        defer { withExtendedLifetime(dead) {} }
        let deadPort = dead.port
        var caches: [RedisGroupsCache] = []
        for index in 0..<4 {
            caches.append(
                index < cutOff
                    ? try RedisGroupsCache(
                        host: "127.0.0.1",
                        port: deadPort,
                        keyPrefix: "partial",
                        timeout: .milliseconds(500)
                    )
                    : try server.store(prefix: "partial", timeout: .seconds(5))
            )
        }
        defer { for cache in caches { cache.close() } }
        let apple = StaticGroupsSource(FleetBudgetTests.customers(1))
        // A budget of 0.01 a second: no token comes back during the test, so every count is exact.
        let services = try caches.map { try FleetBudgetTests.service(apple, shared: $0, burst: 8) }
        let result = await FleetBudgetTests.send(10, through: services)
        #expect(result.sent == 8)
    }

    @Test("a service whose Redis fails sends nothing beyond what Redis granted, by default", .requires(.redisServer))
    func cutOffServiceSendsNothing() async throws {
        let dead = try LoopbackSocket(refusing: ())
        defer { withExtendedLifetime(dead) {} }
        let deadPort = dead.port
        let cache = try RedisGroupsCache(
            host: "127.0.0.1",
            port: deadPort,
            keyPrefix: "alone",
            timeout: .milliseconds(500)
        )
        defer { cache.close() }
        let service = try FleetBudgetTests.service(
            StaticGroupsSource(FleetBudgetTests.customers(1)),
            shared: cache,
            burst: 8
        )
        let result = await FleetBudgetTests.send(5, through: [service])
        #expect(result.sent == 0)
        #expect(
            result.refusals == [
                "the shared cache that keeps the fleet's budget of 0.01 customer-groups requests a second is "
                    + "unavailable, and this process sends nothing beyond what it granted; none was sent"
            ]
        )
    }
}
