import AppStoreGroups
package import Foundation
import GroupDecisions
package import GroupDecisionsRedis
import GroupDecisionsTesting

/// A redis-server of the test's own and the stores a test puts on it, closed together: the setup of
/// every test where processes of a fleet (each a store and a service) share one Redis.
///
/// Started with a delay, it has a ``RedisDelayProxy`` in front of the server, which counts round
/// trips and holds each command that long; stores reach the server through it unless asked for a
/// direct one. Give stores the services' clock (`now:`) so that a fetch time is never in a store's
/// future.
package final class RedisFleet: @unchecked Sendable {
    package let server: RedisServer
    /// The proxy in front of the server, when the fleet was started with a delay.
    package let proxy: RedisDelayProxy?
    private let lock = NSLock()
    private var stores: [RedisGroupsCache] = []

    private init(server: RedisServer, proxy: RedisDelayProxy?) {
        self.server = server
        self.proxy = proxy
    }

    /// Starts a server, and a proxy in front of it holding each command for `proxyDelay` when one
    /// is given.
    package static func start(proxyDelay: Duration? = nil) async throws -> RedisFleet {
        let server = try await RedisServer.start()
        do {
            let proxy = try proxyDelay.map { try RedisDelayProxy(upstreamPort: server.port, delay: $0) }
            return RedisFleet(server: server, proxy: proxy)
        } catch {
            server.stop()
            throw error
        }
    }

    /// A store under `prefix`, through the proxy when there is one (unless `direct`), closed by
    /// ``stop()``.
    ///
    /// Its calls time out after 10 s by default, not the product's 250 ms: a suite run under two
    /// busy loops saw store calls take longer than 250 ms (and 2 s); tests of timeouts pass their own.
    package func store(
        prefix: String,
        timeout: Duration = .seconds(10),
        now: @escaping @Sendable () -> Date = { Date() },
        direct: Bool = false
    ) throws -> RedisGroupsCache {
        let port = direct ? server.port : proxy?.port ?? server.port
        let store = try RedisGroupsCache(
            host: "127.0.0.1",
            port: port,
            keyPrefix: prefix,
            timeout: timeout,
            now: now
        )
        lock.withLock { stores.append(store) }
        return store
    }

    /// Two stores under one prefix: two processes of a fleet.
    package func pair(
        prefix: String,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws -> (RedisGroupsCache, RedisGroupsCache) {
        (try store(prefix: prefix, now: now), try store(prefix: prefix, now: now))
    }

    /// Closes every store, then stops the proxy and the server.
    package func stop() {
        for store in lock.withLock({ stores }) { store.close() }
        proxy?.stop()
        server.stop()
    }
}
