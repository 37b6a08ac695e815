// swift-format-ignore-file
import Foundation
import GroupDecisionsRedis

/// A server of the store, started by the test.
struct MyStoreServer: Sendable {
    var address: String
    func flush() async throws {}
    func restart() async throws {}
}

/// The article's cache (the Redis one stands in for it).
typealias MyGroupsCache = RedisGroupsCache

extension RedisGroupsCache {
    convenience init(server: String, keyPrefix: String, now: @escaping @Sendable () -> Date) {
        // A stand-in: the article's cache takes no configuration that can be refused.
        try! self.init(host: server, port: 6379, keyPrefix: keyPrefix, now: now)
    }
}
