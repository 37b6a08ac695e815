import Foundation
import GroupDecisions
import GroupDecisionsTesting
import ServingTestSupport
import Testing

@testable import GroupDecisionsRedis

/// Huge durations given to the Redis cache saturate instead of trapping.
///
/// The bug it pins: durations a caller gives the Redis cache still trap past the milliseconds that
/// `RedisGroupsCache.milliseconds(_:)` saturates, so "without trapping, whatever their size" does
/// not hold for the calls themselves:
///
/// - a `timeout` of more than 9.2 × 10^15 seconds (`.seconds(Int64.max)`, "no timeout") is
///   accepted by the initializer, then the first call kills the process: "arithmetic overflow" in
///   `RedisConnectionPool.pollTimeout(now:)` (`seconds * 1000`), on the pool's thread;
/// - `takeBudgetToken(from:maximumWait: .seconds(Int64.max))` kills the process: the saturated
///   wait (`Int64.max`) plus the key's lifetime overflows in `takeToken`.
///
/// On main each test below crashes the test process (run them alone:
/// `swift test --filter RedisHugeDurationCallTests`); the next commit saturates both.
@Suite("Redis cache: huge durations given to it do not trap")
struct RedisHugeDurationCallTests {
    @Test("a timeout of Int64.max seconds: a call is answered", .requires(.redisServer))
    func hugeTimeout() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let cache = try server.store(prefix: "huge", timeout: .seconds(Int64.max))
        defer { cache.close() }
        #expect(try await cache.answer(anyTransactionID: "c1", in: .sandbox) == nil)
        let answer = SharedGroupsCacheConformance.answer("g1")
        try await cache.setAnswer(answer, anyTransactionID: "c1", in: .sandbox, timeToLive: .seconds(60))
        #expect(try await cache.answer(anyTransactionID: "c1", in: .sandbox) == answer)
    }

    @Test("a budget token with a wait of Int64.max seconds is taken", .requires(.redisServer))
    func hugeBudgetWait() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let cache = try server.store(prefix: "huge")
        defer { cache.close() }
        // A token every 1,000 seconds: however busy the machine, the next is not banked yet.
        let budget = FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: 0.001, burst: 1)
        #expect(try await cache.takeBudgetToken(from: budget, maximumWait: .seconds(Int64.max)) == .taken(wait: .zero))
        // The next is reserved up to 1,000 seconds ahead: within any wait that long.
        let next = try await cache.takeBudgetToken(from: budget, maximumWait: .seconds(Int64.max))
        guard case .taken(let wait) = next else {
            Issue.record("expected a reserved token, got \(next)")
            return
        }
        #expect(wait > .zero && wait <= .seconds(1_000))
    }
}
