import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// A malformed transaction id is refused before anything else: no budget spent, no flight, no
/// shared-cache call.
@Suite("Decision service: malformed transaction ids")
struct MalformedIDTests {
    @Test("a flood of malformed ids spends none of the budget: a valid customer is served after it")
    func malformedIDsSpendNoBudget() async throws {
        let clock = ManualClock()
        let stub = StubGroupsSource(clock: clock.now)
        let cache = SharedCacheGuardTests.scriptedCache(clock)
        let service = try GroupDecisionServiceTests.service(stub, clock: clock, shared: cache) {
            $0.rateLimits.maximumRateLimitWait = .zero
        }
        let malformed = ["", "has space", "semi;colon", "../../etc", String(repeating: "9", count: 129), "é"]
        for _ in 0..<4 {
            for id in malformed {
                let error = await expectError {
                    try await service.decision(anyTransactionID: id, environment: .sandbox)
                }
                #expect(error?.code == .invalidArgument, "\(id)")
                #expect(error?.attempts == 0)
            }
        }
        #expect(cache.calls.count == 0)
        // The sandbox's whole budget of 5 is left for valid customers.
        for index in 0..<5 {
            #expect(try await service.decision(anyTransactionID: "c\(index)", environment: .sandbox).source == .live)
        }
        #expect(stub.requests == ["c0", "c1", "c2", "c3", "c4"])
    }
}
