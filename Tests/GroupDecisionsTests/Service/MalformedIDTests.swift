import GroupDecisionsTesting
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// A malformed transaction id is refused before anything else: no budget spent, no flight, no
/// shared-cache call, whether a decision or an invalidation asks.
///
/// `invalidate(anyTransactionID:)` took any string, so `POST /invalidate?transactionId=a%00b`
/// answered 200 where `GET /decision` answered 400, each such call wrote a generation key of the
/// id's size into Redis, and an id holding `:` reached keys outside the customer's own
/// (`sandbox:groups:c1` under prefix `app` deleted customer c1's answer under `app:sandbox:groups`).
@Suite("Malformed transaction ids are refused before anything else")
struct MalformedIDTests {
    static let malformed = [
        "", "has space", "semi;colon", "../../etc", String(repeating: "9", count: 129), "é", "a\u{0}b",
        "sandbox:groups:c1", String(repeating: "9", count: 5000), "*",
    ]

    @Test(
        "a flood of malformed ids spends none of the budget and reaches no cache; a valid customer is served after it"
    )
    func malformedIDsSpendNoBudget() async throws {
        let clock = ManualClock()
        let stub = StubGroupsSource(clock: clock.now)
        let cache = ScriptedGroupsCache(combinedCalls: .native, forwardsBudget: false, clock: clock)
        let service = try GroupDecisionServiceTests.service(stub, clock: clock, shared: cache) {
            $0.rateLimits.maximumRateLimitWait = .zero
        }
        for _ in 0..<4 {
            for id in Self.malformed {
                let error = await expectError { try await service.decide(id) }
                #expect(error?.code == .invalidArgument, "\(id)")
                #expect(error?.attempts == 0)
                let invalidation = await expectError { try await service.invalidate(anyTransactionID: id) }
                #expect(invalidation?.code == .invalidArgument, "\(id)")
            }
        }
        #expect(cache.calls == [])
        // The sandbox's whole budget of 5 is left for valid customers.
        for index in 0..<5 { #expect(try await service.decide("c\(index)").source == .live) }
        #expect(stub.requests == ["c0", "c1", "c2", "c3", "c4"])
    }
}
