import Foundation
import Testing

@testable import AppStoreGroups

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A server that sends a reply nobody asked for: the connection must not be reused, or that reply
/// would answer the next command.
@Suite("Redis store: a reply nobody asked for")
struct UnaskedReplyTests {
    /// Answers the first command of each connection with a null and then an integer 5 (one reply
    /// too many), and every later command with a null.
    static func serveOneReplyTooMany(on listener: LoopbackSocket) {
        let descriptor = listener.descriptor
        Thread.detachNewThread {
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                Thread.detachNewThread {
                    var first = true
                    var buffer = [UInt8](repeating: 0, count: 65_536)
                    while buffer.withUnsafeMutableBytes({ recv(connection, $0.baseAddress, $0.count, 0) }) > 0 {
                        let reply = Array((first ? "$-1\r\n:5\r\n" : "$-1\r\n").utf8)
                        first = false
                        _ = reply.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    }
                    close(connection)
                }
            }
        }
    }

    @Test("the extra reply is dropped with its connection, not read as the next command's answer")
    func extraReply() async throws {
        let listener = try LoopbackSocket(listening: ())
        Self.serveOneReplyTooMany(on: listener)
        defer { shutdown(listener.descriptor, Int32(SHUT_RDWR)) }
        let store = try RedisGroupsCache(
            host: "127.0.0.1",
            port: listener.port,
            keyPrefix: "test",
            timeout: .seconds(10)
        )
        #expect(try await store.rateLimitedUntil(.customerGroups, in: .sandbox) == nil)
        #expect(try await store.rateLimitedUntil(.customerGroups, in: .sandbox) == nil)
        #expect(try await store.answer(forCustomer: "c1", in: .sandbox) == nil)
    }
}
