import Foundation
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// A RESP2 server of a test's own on 127.0.0.1: a small in-memory Redis (`GET`, `SET`, `DEL`, `ECHO`, `PING`; any other
/// command answers `:1`) whose answers a test replaces command by command, to act as a broken server or proxy.
final class RedisFakeServer: @unchecked Sendable {
    /// What to do with one command.
    enum Action: Sendable {
        /// Answer as the small Redis would.
        case standard
        /// Send these bytes instead.
        case reply([UInt8])
        /// Answer as the small Redis would, then send the same reply again after the delay.
        case standardThenAgain(after: Duration)
        /// Close the connection without answering.
        case close
        /// Never answer this command (nor any after it on the connection).
        case silence
    }

    /// A command the server received: the connection's number (from 1) and the arguments.
    struct Command: Sendable, Equatable {
        var connection: Int
        var arguments: [String]
    }

    /// Chooses the action for the `index`-th command (from 0, `ECHO` and `PING` not counted) of
    /// connection `connection` (from 1).
    package typealias Responder = @Sendable (_ connection: Int, _ index: Int, _ arguments: [String]) -> Action

    let port: Int
    private let listener: LoopbackSocket
    private let responder: Responder
    private let lock = NSLock()
    private var values: [[UInt8]: [UInt8]] = [:]
    private var received: [Command] = []
    private var accepted = 0
    private var repeated = 0
    private var open: [Int32] = []

    init(responder: @escaping Responder = { _, _, _ in .standard }) throws {
        listener = try LoopbackSocket(listening: ())
        port = listener.port
        self.responder = responder
        let descriptor = listener.descriptor
        Thread.detachNewThread { [self] in
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                LoopbackSocket.setNoDelay(connection)
                let number = lock.withLock {
                    accepted += 1
                    open.append(connection)
                    return accepted
                }
                Thread.detachNewThread { self.serve(connection, number: number) }
            }
        }
    }

    deinit {
        stop()
    }

    /// Stops accepting and closes every connection.
    func stop() {
        shutdown(listener.descriptor, Int32(SHUT_RDWR))
        lock.withLock {
            for descriptor in open { shutdown(descriptor, Int32(SHUT_RDWR)) }
        }
    }

    /// Every command received so far, `ECHO` and `PING` excluded.
    var commands: [Command] { lock.withLock { received } }
    /// Connections accepted so far.
    var connections: Int { lock.withLock { accepted } }
    /// Connections the client has not closed yet.
    var openConnections: Int { lock.withLock { open.count } }
    /// Replies sent a second time so far.
    var repeatedReplies: Int { lock.withLock { repeated } }

    /// A store on this server whose connections stay open however long the test pauses between calls (the tests count
    /// connections and the commands each received).
    ///
    /// Its calls time out after 30 s by default: a call that must be answered must not time out on a busy machine, and
    /// a store that missed a reply fails each call within that. Tests of timeouts pass their own.
    func store(
        timeout: Duration = .seconds(30),
        maximumConnections: Int = 32,
        idleLifetime: Duration = .seconds(86_400)
    ) throws -> RedisGroupsCache {
        try RedisGroupsCache(
            host: "127.0.0.1",
            port: port,
            keyPrefix: "test",
            timeout: timeout,
            maximumConnections: maximumConnections,
            maximumValueBytes: 2 << 20,
            maximumClockSkew: .seconds(5),
            now: { Date() },
            idleLifetime: idleLifetime
        )
    }

    /// Stores a value as `SET` would.
    func set(_ key: [UInt8], _ value: [UInt8]) {
        lock.withLock { values[key] = value }
    }

    private func serve(_ connection: Int32, number: Int) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var index = 0
        // Closed under the lock, and forgotten there: the descriptor's number may go to another
        // test's socket at once, which `stop()` and a late repeat must never touch.
        defer {
            lock.withLock {
                open.removeAll { $0 == connection }
                close(connection)
            }
        }
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            buffer += chunk[0..<count]
            // The replies to everything one read brought, sent in one write, as Redis does.
            var replies: [UInt8] = []
            defer { LoopbackSocket.transmit(replies, on: connection) }
            while let (arguments, length) = Self.parseCommand(buffer) {
                buffer.removeFirst(length)
                let name = arguments.first.map { String(decoding: $0, as: UTF8.self).uppercased() } ?? ""
                var action = Action.standard
                if name != "ECHO", name != "PING" {
                    let strings = arguments.map { String(decoding: $0, as: UTF8.self) }
                    lock.withLock { received.append(Command(connection: number, arguments: strings)) }
                    action = responder(number, index, strings)
                    index += 1
                }
                switch action {
                case .standard:
                    replies += standardReply(name, arguments)
                case .reply(let bytes):
                    replies += bytes
                case .standardThenAgain(let delay):
                    let reply = standardReply(name, arguments)
                    replies += reply
                    Thread.detachNewThread {
                        Thread.sleep(forTimeInterval: delay / .seconds(1))
                        self.lock.withLock {
                            guard self.open.contains(connection) else { return }
                            LoopbackSocket.transmit(reply, on: connection)
                            self.repeated += 1
                        }
                    }
                case .close, .silence:
                    LoopbackSocket.transmit(replies, on: connection)
                    replies = []
                    if case .close = action {
                        shutdown(connection, Int32(SHUT_RDWR))
                    } else {
                        while chunk.withUnsafeMutableBytes({ recv(connection, $0.baseAddress, $0.count, 0) }) > 0 {}
                    }
                    return
                }
            }
        }
    }

    private func standardReply(_ name: String, _ arguments: [[UInt8]]) -> [UInt8] {
        switch (name, arguments.count) {
        case ("ECHO", 2):
            return Self.bulk(arguments[1])
        case ("PING", _):
            return Array("+PONG\r\n".utf8)
        case ("GET", 2):
            return lock.withLock { values[arguments[1]] }.map(Self.bulk) ?? Array("$-1\r\n".utf8)
        case ("SET", 3...):
            lock.withLock { values[arguments[1]] = arguments[2] }
            return Array("+OK\r\n".utf8)
        case ("DEL", _):
            let removed = lock.withLock { arguments.dropFirst().filter { values.removeValue(forKey: $0) != nil }.count }
            return Array(":\(removed)\r\n".utf8)
        default:
            return Array(":1\r\n".utf8)
        }
    }

    static func bulk(_ bytes: [UInt8]) -> [UInt8] {
        Array("$\(bytes.count)\r\n".utf8) + bytes + [13, 10]
    }

    /// The command at the start of `bytes` (an array of bulk strings) and its length, or `nil` while it is incomplete.
    static func parseCommand(_ bytes: [UInt8]) -> ([[UInt8]], Int)? {
        let parser = RESPParser(maximumBulkBytes: 4 << 20, maximumArrayCount: 1 << 20)
        guard case (.array(let arguments?), let length)? = try? parser.parse(bytes[...]) else { return nil }
        return (arguments.map(\.bulkValue), length)
    }
}
