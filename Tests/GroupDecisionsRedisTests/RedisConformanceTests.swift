import Foundation
import GroupDecisions
import GroupDecisionsTesting
import ServingTestSupport
import Testing

@testable import GroupDecisionsRedis

/// The Redis cache passes the conformance suite every shared cache must pass, on a real
/// redis-server: every check and the operation sequences from two clients over one prefix, each
/// check and sequence under a key prefix of its own, in real time (Redis keeps its own clock).
@Suite("Redis cache: the shared-cache conformance suite on a real redis-server")
struct RedisConformanceTests {
    /// The suite over fresh prefixes of `server` (a new UUID each, so every check starts on an empty
    /// one), through an app's `client` when given, a second instance being a second client on the
    /// same server and prefix, as another process of the fleet opens it.
    static func conformance(
        _ server: RedisServer,
        client: (any RedisCommandSending)? = nil
    ) -> SharedGroupsCacheConformance {
        let openSecondInstance: @Sendable (RedisGroupsCache) throws -> RedisGroupsCache = {
            try server.store(prefix: $0.keyPrefix)
        }
        return SharedGroupsCacheConformance(makeSecondInstance: openSecondInstance) {
            let prefix = "conformance-\(UUID().uuidString.lowercased())"
            guard let client else { return try server.store(prefix: prefix) }
            return try RedisGroupsCache(client: client, keyPrefix: prefix)
        }
    }

    @Test("every check passes, the operation sequences included, and a hundred more sequences", .requires(.redisServer))
    func conforms() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        var conformance = Self.conformance(server)
        conformance.seeds += Array(1_001...1_100)
        try await conformance.run()
    }
}
