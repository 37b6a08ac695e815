import Foundation
import GroupDecisionsTesting
import GroupPolicy
import GroupPolicyBasics
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// A 429 that arrives while a call waits for its token: the call must not leave before the
/// `Retry-After` instant it did not know about when it started waiting.
@Suite("Decision service: a 429 during a token wait")
struct RateLimitRaceTests {
    @Test("a call that waited for a token while another process got a 429 sends nothing before Retry-After")
    func gateClosedDuringTokenWait() async throws {
        let clock = ManualClock()
        let stub = StubGroupsSource(clock: clock.now)
        let shared = InMemoryGroupsCache(now: clock.now)
        let retryAfter = clock.date.addingTimeInterval(10)
        let sleeps = Locked(0)
        // The token wait is where another process's 429 lands: its instant is in the shared cache
        // by the time this process wakes up.
        let timeSource = TimeSource(
            now: clock.now,
            sleep: { duration in
                if sleeps.withLock({ count in
                    count += 1
                    return count == 1
                }) {
                    try? await shared.setRateLimitedUntil(retryAfter, for: .customerGroups, in: .sandbox)
                }
                clock.advance(by: duration)
            }
        )
        let service = try ServiceHarness(source: stub, sharedCache: shared, time: .custom(timeSource)) {
            $0.rateLimits.maximumRateLimitWait = .seconds(1)
            // A new fleet bucket starts with the burst less a second's reservations: 5 of 10.
            $0.rateLimits.requestBurst = [.sandbox: 10]
        }
        .service
        for index in 0..<5 {
            #expect(try await service.decision(anyTransactionID: "c\(index)", environment: .sandbox).source == .live)
        }
        // The sixth call of the second waits 200 ms for its token, and meanwhile the gate closes
        // for 10 seconds, longer than this service may wait.
        let error = await expectError { try await service.decision(anyTransactionID: "c5", environment: .sandbox) }
        #expect(error?.code == .rateLimitExceeded)
        #expect(error?.httpStatus == nil)
        #expect(error?.retryAfter == retryAfter)
        #expect(stub.requests == ["c0", "c1", "c2", "c3", "c4"])
    }
}
