import Foundation
import GroupDecisionsRedis

/// The app's own store, as the article's first block uses it.
protocol KeyValueStore {
    func put(_ key: [UInt8], _ value: [UInt8], expiresIn: Duration) async throws
    func get(_ key: [UInt8]) async throws -> [UInt8]?
}

/// A server of the store, started by the test.
struct MyStoreServer {
    var address: String
    static func start() async throws -> MyStoreServer { MyStoreServer(address: "127.0.0.1") }
}

/// The article's cache (the Redis one stands in for it).
typealias MyGroupsCache = RedisGroupsCache

extension RedisGroupsCache {
    convenience init(address: String, keyPrefix: String) throws {
        try self.init(host: address, port: 6379, keyPrefix: keyPrefix)
    }
}
