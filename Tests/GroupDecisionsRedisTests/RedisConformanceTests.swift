import Foundation
import GroupDecisions
import GroupDecisionsTesting
import ServingTestSupport
import Synchronization
import Testing

@testable import GroupDecisionsRedis

/// The Redis cache passes the conformance suite every shared cache must pass, on a real
/// redis-server, each check under a key prefix of its own.
@Suite("Redis cache: the shared-cache conformance suite on a real redis-server")
struct RedisConformanceTests {
    @Test("every check passes", .requires(.redisServer))
    func conforms() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let prefixes = PrefixCounter()
        // A second instance is a second client on the same server and prefix, as another process
        // of the fleet opens it.
        try await SharedGroupsCacheConformance(
            makeSecondInstance: { try server.store(prefix: ($0 as! RedisGroupsCache).keyPrefix) }
        ) {
            try server.store(prefix: "conformance-\(prefixes.next())")
        }
        .run()
    }
}

/// A fresh number for each cache, so every check starts on an empty prefix.
final class PrefixCounter: Sendable {
    private let count = Mutex(0)

    func next() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }
}
