import Foundation
import GroupDecisions
import GroupDecisionsRedis
import GroupDecisionsTesting
import GroupPolicy

/// `RedisGroupsCache` on a server of the user's, one fresh key prefix per seed; the store's faults
/// delete keys of that prefix only (documented in `RedisGroupsCache`), and the prefix's keys are
/// deleted once the seed has run.
enum RedisStore {
    static func store(host: String, port: Int) -> FleetSimulation.Store {
        // Redis keeps the budget and the expiries on its own clock: the simulation follows the wall clock.
        FleetSimulation.Store(clock: .wall) { now in
            let prefix = "group-decisions-simulation:\(UUID().uuidString.lowercased())"
            let cache = try RedisGroupsCache(host: host, port: port, keyPrefix: prefix, timeout: .seconds(1), now: now)
            let keys = RedisKeys(client: cache.client)
            // The first call proves the server answers: a run against nothing would only see failures.
            _ = try await cache.invalidationCount()
            let budgets = StoreEnvironment.allCases.map { "\(prefix):\($0.rawValue):budget:customer-groups" }
            return FleetSimulation.Store.Instance(
                cache: cache,
                // Each service a client of its own, as each process of a fleet has.
                makeAnotherInstance: {
                    try RedisGroupsCache(host: host, port: port, keyPrefix: prefix, timeout: .seconds(1), now: now)
                },
                flush: { try await keys.deleteAll(prefix: prefix) },
                loseBudget: { try await keys.delete(budgets) },
                loseInvalidationCount: { try await keys.delete(["\(prefix):invalidations"]) },
                loseAnswer: { customerID, environment in
                    try await keys.delete(["\(prefix):\(environment.rawValue):groups:\(customerID)"])
                },
                close: {
                    try? await keys.deleteAll(prefix: prefix)
                    cache.close()
                }
            )
        }
    }
}

struct RedisKeysError: Error, CustomStringConvertible {
    var description: String
}

/// The few raw commands the store's faults need (`DEL`, `SCAN`), sent through the store's own
/// client (``RedisGroupsCache/client``).
struct RedisKeys: Sendable {
    let client: any RedisCommandSending

    /// Deletes the keys (`DEL`).
    func delete(_ keys: [String]) async throws {
        _ = try await command(["DEL"] + keys)
    }

    /// Deletes every key under `prefix:` (`SCAN` then `DEL`, a batch at a time).
    func deleteAll(prefix: String) async throws {
        var cursor: [UInt8] = Array("0".utf8)
        repeat {
            let reply = try await command([
                "SCAN", String(decoding: cursor, as: UTF8.self), "MATCH", "\(prefix):*", "COUNT", "1000",
            ])
            guard case .array(let parts?) = reply, parts.count == 2, case .bulk(let next?) = parts[0],
                case .array(let found?) = parts[1]
            else { throw RedisKeysError(description: "SCAN: unexpected reply") }
            let keys = found.compactMap { reply -> String? in
                if case .bulk(let key?) = reply { return String(decoding: key, as: UTF8.self) }
                return nil
            }
            if !keys.isEmpty { try await delete(keys) }
            cursor = next
        } while cursor != Array("0".utf8)
    }

    private func command(_ words: [String]) async throws -> RESPReply {
        let reply = try await client.send(RedisCommand(words.map { Array($0.utf8) }, label: words[0]))
        if case .error(let message) = reply { throw RedisKeysError(description: "\(words[0]): \(message)") }
        return reply
    }
}
