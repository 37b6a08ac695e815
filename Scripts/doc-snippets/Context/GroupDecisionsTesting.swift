// swift-format-ignore-file
import GroupDecisionsRedis

/// A server of the store, started by the test.
struct MyStoreServer: Sendable {
    var address: String
}

let server = MyStoreServer(address: "127.0.0.1")

/// The article's cache (the Redis one stands in for it).
typealias MyGroupsCache = RedisGroupsCache

extension RedisGroupsCache {
    convenience init(address: String, keyPrefix: String) {
        // A stand-in: the article's cache takes no configuration that can be refused.
        try! self.init(host: address, port: 6379, keyPrefix: keyPrefix)
    }

    convenience init() {
        self.init(address: "127.0.0.1", keyPrefix: "simulation")
    }
}
