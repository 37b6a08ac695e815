import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// The bug it pins: `invalidate(anyTransactionID:)` takes any string, while `decision(anyTransactionID:)`
/// and `invalidate(groupID:)` refuse a malformed id before anything else.
///
/// `POST /invalidate?transactionId=a%00b` answers 200 `{"invalidated":"a\u0000b"}` (so does an id
/// of 5,000 characters), where `GET /decision` with the same id answers 400. Each such call writes
/// a customer generation key, kept a day, of the id's size into Redis; and an id holding `:`
/// reaches keys outside the customer's own: `invalidate(anyTransactionID: "sandbox:groups:c1")`
/// under prefix `app` deletes `app:sandbox:groups:sandbox:groups:c1`, the answer of customer `c1`
/// under the prefix `app:sandbox:groups`. No customer can have such an id (1 to 128 characters of
/// `A-Z a-z 0-9 _ -`), so nothing is lost by refusing it.
@Suite("Invalidation: a malformed id is refused as a decision refuses it")
struct InvalidateMalformedIDTests {
    @Test("invalidate(anyTransactionID:) refuses a malformed id, nothing sent to the shared cache")
    func malformedInvalidationRefused() async throws {
        let clock = ManualClock()
        let stub = StubGroupsSource(clock: clock.now)
        let cache = SharedCacheGuardTests.scriptedCache(clock)
        let service = try GroupDecisionServiceTests.service(stub, clock: clock, shared: cache)
        let malformed = ["", "a\u{0}b", "sandbox:groups:c1", "has space", String(repeating: "9", count: 5000), "*"]
        var refused = 0
        for id in malformed {
            if await Self.refusal(service, id) == .invalidArgument { refused += 1 }
        }
        // Expected: all 6 refused, as decision(anyTransactionID:) refuses them; none reaches the
        // shared cache. On main none is refused and each is an EVAL invalidate.
        #expect(refused == 6)
        #expect(cache.calls.filter { $0.hasPrefix("invalidate") }.count == 0)
    }

    /// The code of the error the invalidation threw, or `nil` when it returned.
    static func refusal(_ service: GroupDecisionService, _ id: String) async -> AppStoreGroupsError.Code? {
        do {
            try await service.invalidate(anyTransactionID: id)
            return nil
        } catch {
            return error.code
        }
    }
}
