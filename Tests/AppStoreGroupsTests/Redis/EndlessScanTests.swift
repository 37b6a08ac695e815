import Foundation
import Testing

@testable import AppStoreGroups

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A server whose `SCAN` cursor never returns to 0: `invalidateAll` must end, not walk forever.
@Suite("Redis store: a SCAN that never ends")
struct EndlessScanTests {
    /// Answers every command on every connection with a `SCAN` reply whose cursor is 7 and which
    /// holds no keys, until the listener is closed.
    static func serveEndlessScan(on listener: LoopbackSocket) {
        let descriptor = listener.descriptor
        Thread.detachNewThread {
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                Thread.detachNewThread {
                    let reply = Array("*2\r\n$1\r\n7\r\n*0\r\n".utf8)
                    var buffer = [UInt8](repeating: 0, count: 65_536)
                    while buffer.withUnsafeMutableBytes({ recv(connection, $0.baseAddress, $0.count, 0) }) > 0 {
                        _ = reply.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    }
                    close(connection)
                }
            }
        }
    }

    @Test("invalidateAll stops after its most SCAN calls with a store failure")
    func endlessCursor() async throws {
        let listener = try LoopbackSocket(listening: ())
        Self.serveEndlessScan(on: listener)
        // Wakes the accepting thread, which closing alone does not, before the descriptor's number
        // can go to another test's socket.
        defer { shutdown(listener.descriptor, Int32(SHUT_RDWR)) }
        // A generous timeout per call: the bound under test is the number of calls, and on a
        // loaded machine one of 100,000 calls may take longer than the default 250 ms.
        let store = try RedisGroupsCache(
            host: "127.0.0.1",
            port: listener.port,
            keyPrefix: "test",
            timeout: .seconds(30)
        )
        let error = await expectError { try await store.invalidateAll() }
        #expect(error?.code == .storeFailure)
        #expect(
            error?.message
                == "Redis at 127.0.0.1:\(listener.port): SCAN did not finish within 100000 calls"
        )
    }
}
