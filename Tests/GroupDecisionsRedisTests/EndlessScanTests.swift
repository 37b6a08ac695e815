import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// A server whose `SCAN` cursor never returns to 0: `invalidateAll` must end, not walk forever.
@Suite("Redis store: a SCAN that never ends")
struct EndlessScanTests {
    @Test("invalidateAll stops after its most SCAN calls with a store failure")
    func endlessCursor() async throws {
        // Every SCAN is answered with cursor 7 and no keys (after everyone's generation, set first).
        let fake = try RedisFakeServer { _, _, arguments in
            arguments.first == "SET" ? .reply(Array("+OK\r\n".utf8)) : .reply(Array("*2\r\n$1\r\n7\r\n*0\r\n".utf8))
        }
        defer { fake.stop() }
        // A generous timeout per call: the bound under test is the number of calls, and on a
        // loaded machine one of 100,000 calls may take longer than the default 250 ms.
        let store = try fake.store(timeout: .seconds(30))
        defer { store.close() }
        let error = await expectError { try await store.invalidateAll() }
        #expect(error?.code == .sharedCacheFailure)
        #expect(
            error?.message
                == "Redis at 127.0.0.1:\(fake.port): SCAN answers: did not finish within 100000 calls"
        )
        #expect(fake.commands.filter { $0.arguments.first == "SCAN" }.count == 100_000)
        #expect(fake.commands.count == 100_001)
    }
}
