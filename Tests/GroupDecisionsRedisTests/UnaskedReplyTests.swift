import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// A server that sends a reply nobody asked for: the call it lands in fails, and the connection is
/// not reused, or that reply would answer the next command.
@Suite("Redis store: a reply nobody asked for")
struct UnaskedReplyTests {
    @Test("the extra reply fails its call and goes with its connection, never read as the next command's answer")
    func extraReply() async throws {
        // The first command of each connection is answered with a null and then an integer 5: one
        // reply too many.
        let fake = try RedisFakeServer { _, index, _ in index == 0 ? .reply(Array("$-1\r\n:5\r\n".utf8)) : .standard }
        defer { fake.stop() }
        let store = try fake.store()
        defer { store.close() }
        let error = await expectError { try await store.rateLimitedUntil(.customerGroups, in: .sandbox) }
        #expect(error?.code == .sharedCacheFailure)
        #expect(
            error?.message == "Redis at 127.0.0.1:\(fake.port): GET rate-limit: the replies were not the ones asked for"
        )
        // Each later call starts on a new connection, whose first command gets one reply too many.
        #expect(await expectError { try await store.rateLimitedUntil(.customerGroups, in: .sandbox) } != nil)
        #expect(await expectError { try await store.answer(anyTransactionID: "c1", in: .sandbox) } != nil)
        #expect(fake.connections == 3)
    }
}
