import Foundation
import GroupDecisions
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import GroupDecisionsRedis

/// `RedisGroupsCache` under the fleet simulation, on a real redis-server of the test's own: no promise reported broken.
@Suite("Fleet simulation: RedisGroupsCache keeps every promise", .heavy)
struct RedisFleetSimulationTests {
    /// Redis's store, one prefix per run, each service a client of its own, with the faults a
    /// server of the test's own can suffer: keys deleted, flushed, restarted.
    static func store(_ server: RedisServer) -> FleetSimulation.Store {
        // Redis keeps the budget and the expiries on its own clock (TIME): the simulation follows
        // the wall clock. The clients take the simulation's, for the 429 gate and the fetch times.
        FleetSimulation.Store(clock: .wall) { now in
            let prefix = "simulation-\(UUID().uuidString.lowercased())"
            let cache = try server.store(prefix: prefix, now: now)
            let delete = { @Sendable (keys: [String]) async throws in
                _ = try await cache.call([Array("DEL".utf8)] + keys.map { Array($0.utf8) }, "DEL")
            }
            return FleetSimulation.Store.Instance(
                cache: cache,
                makeAnotherInstance: { try server.store(prefix: prefix, now: now) },
                flush: { _ = try await cache.call([Array("FLUSHALL".utf8)], "FLUSHALL") },
                loseBudget: {
                    try await delete(
                        StoreEnvironment.allCases.map { "\(prefix):\($0.rawValue):budget:customer-groups" }
                    )
                },
                loseInvalidationCount: { try await delete(["\(prefix):invalidations"]) },
                loseAnswer: { customerID, environment in
                    try await delete(["\(prefix):\(environment.rawValue):groups:\(customerID)"])
                },
                restart: { try await server.restart() },
                close: { cache.close() }
            )
        }
    }

    @Test("with every fault, restarts included: 0 violations in 30 seeds (real redis-server)", .requires(.redisServer))
    func keepsEveryPromise() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let simulation = FleetSimulation(store: Self.store(server))
        var violations: [FleetSimulation.Violation] = []
        for seed in 1...30 { violations += try await simulation.run(seed: seed) }
        #expect(violations.map(\.description) == [])
    }
}
