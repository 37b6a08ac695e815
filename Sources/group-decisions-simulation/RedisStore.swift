import Dispatch
import Foundation
import GroupDecisions
import GroupDecisionsRedis
import GroupDecisionsTesting
import GroupPolicy

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `RedisGroupsCache` on a server of the user's, one fresh key prefix per seed; the store's faults
/// delete keys of that prefix only (documented in `RedisGroupsCache`), and the prefix's keys are
/// deleted once the seed has run.
enum RedisStore {
    static func store(host: String, port: Int) -> FleetSimulation.Store {
        // Redis keeps the budget and the expiries on its own clock: the simulation follows the wall clock.
        FleetSimulation.Store(clock: .wall) { now in
            let prefix = "group-decisions-simulation:\(UUID().uuidString.lowercased())"
            let cache = try RedisGroupsCache(host: host, port: port, keyPrefix: prefix, timeout: .seconds(1), now: now)
            let keys = RedisKeys(host: host, port: port)
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

/// The few raw commands the store's faults need (`DEL`, `SCAN`), each on a connection of its own,
/// off Swift's cooperative threads.
struct RedisKeys: Sendable {
    let host: String
    let port: Int

    /// Deletes the keys (`DEL`).
    func delete(_ keys: [String]) async throws {
        _ = try await command(["DEL"] + keys)
    }

    /// Deletes every key under `prefix:` (`SCAN` then `DEL`, a batch at a time).
    func deleteAll(prefix: String) async throws {
        var cursor = "0"
        repeat {
            let reply = try await command(["SCAN", cursor, "MATCH", "\(prefix):*", "COUNT", "1000"])
            guard case .array(let parts) = reply, parts.count == 2, case .bulk(let next?) = parts[0],
                case .array(let found) = parts[1]
            else { throw RedisKeysError(description: "SCAN: unexpected reply") }
            let keys = found.compactMap { reply -> String? in
                if case .bulk(let key?) = reply { return key }
                return nil
            }
            if !keys.isEmpty { try await delete(keys) }
            cursor = next
        } while cursor != "0"
    }

    indirect enum Reply {
        case simple(String)
        case error(String)
        case integer(Int)
        case bulk(String?)
        case array([Reply])
    }

    private func command(_ words: [String]) async throws -> Reply {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try self.blockingCommand(words) })
            }
        }
    }

    private func blockingCommand(_ words: [String]) throws -> Reply {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var addresses: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &addresses) == 0, let first = addresses else {
            throw RedisKeysError(description: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(addresses) }
        let descriptor = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard descriptor >= 0 else { throw RedisKeysError(description: "socket failed") }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connect(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            throw RedisKeysError(description: "cannot connect to \(host):\(port)")
        }
        var request = "*\(words.count)\r\n"
        for word in words { request += "$\(word.utf8.count)\r\n\(word)\r\n" }
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let written = bytes[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
            guard written > 0 else { throw RedisKeysError(description: "send failed") }
            sent += written
        }
        var reader = ReplyReader(descriptor: descriptor)
        let reply = try reader.reply()
        if case .error(let message) = reply { throw RedisKeysError(description: "\(words[0]): \(message)") }
        return reply
    }

    /// Reads one RESP2 reply from a socket.
    private struct ReplyReader {
        let descriptor: Int32
        var buffer: [UInt8] = []

        mutating func fill() throws {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw RedisKeysError(description: "the connection closed") }
            buffer += chunk[..<count]
        }

        mutating func line() throws -> String {
            while true {
                if let end = buffer.firstIndex(of: UInt8(ascii: "\r")), end + 1 < buffer.count {
                    let line = String(decoding: buffer[..<end], as: UTF8.self)
                    buffer.removeFirst(end + 2)
                    return line
                }
                try fill()
            }
        }

        mutating func reply() throws -> Reply {
            let line = try line()
            guard let kind = line.first else { throw RedisKeysError(description: "an empty reply") }
            let rest = String(line.dropFirst())
            switch kind {
            case "+": return .simple(rest)
            case "-": return .error(rest)
            case ":": return .integer(Int(rest) ?? 0)
            case "$":
                guard let length = Int(rest), length >= 0 else { return .bulk(nil) }
                while buffer.count < length + 2 { try fill() }
                let value = String(decoding: buffer[..<length], as: UTF8.self)
                buffer.removeFirst(length + 2)
                return .bulk(value)
            case "*":
                guard let count = Int(rest), count >= 0 else { return .array([]) }
                var items: [Reply] = []
                for _ in 0..<count { items.append(try reply()) }
                return .array(items)
            default:
                throw RedisKeysError(description: "an unknown reply")
            }
        }
    }
}
