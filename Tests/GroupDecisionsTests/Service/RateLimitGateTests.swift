import Foundation
import GroupDecisionsTesting
import GroupPolicy
import GroupPolicyBasics
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// The rate-limit gate: holds cut to the longest hold, a 429 that lands during a token wait,
/// instants read back from the shared cache rather than pinned, and a budget and a gate per endpoint.
@Suite("Rate-limit gate")
struct RateLimitGateTests {
    static let tenYears: TimeInterval = 315_360_000

    /// A service over ``source`` on ``clock`` that never waits for a token.
    func makeService(
        shared: (any SharedGroupsCache)? = nil,
        observer: RecordingObserver = RecordingObserver(),
        configure: (inout GroupDecisionService.Configuration) -> Void = { _ in }
    ) throws -> GroupDecisionService {
        try ServiceHarness(source: source, sharedCache: shared, clock: clock, observer: observer) {
            $0.rateLimits.maximumRateLimitWait = .zero
            configure(&$0)
        }
        .service
    }

    let clock = ManualClock()
    let source = StaticGroupsSource(Families.customers(4))
    let shared: InMemoryGroupsCache

    init() { shared = InMemoryGroupsCache(now: clock.now) }

    /// A 429's `Retry-After` (seconds from now, `nil` for none), the longest hold configured, and the resulting hold.
    struct Hold: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var retryAfter: TimeInterval?
        var longest: Duration?
        var held: TimeInterval
        var sharedCacheDown = false
    }

    static let holds = [
        Hold(testDescription: "a Retry-After ten years ahead holds an hour", retryAfter: tenYears, held: 3600),
        Hold(testDescription: "the longest hold is configurable", retryAfter: 7200, longest: .seconds(600), held: 600),
        // Apple's clock reads two hours later than this server's; Apple asks for 30 seconds.
        Hold(testDescription: "a server clock two hours behind Apple's holds an hour", retryAfter: 7230, held: 3600),
        Hold(testDescription: "a 429 without a Retry-After holds a minute", retryAfter: nil, held: 60),
        Hold(testDescription: "a Retry-After in the past holds a second", retryAfter: -5, held: 1),
        Hold(
            testDescription: "while the shared cache is unavailable, this process's own 429 holds it",
            retryAfter: 20,
            held: 20,
            sharedCacheDown: true
        ),
    ]

    @Test("a 429 holds every decision until its Retry-After, cut to the longest hold, then no longer", arguments: holds)
    func holdAfterA429(_ hold: Hold) async throws {
        let observer = RecordingObserver()
        let down = hold.sharedCacheDown ? ScriptedGroupsCache.unreachable() : nil
        let service = try makeService(shared: down, observer: observer) {
            if let longest = hold.longest { $0.rateLimits.maximumRateLimitHold = longest }
        }
        let asked = hold.retryAfter.map { clock.date.addingTimeInterval($0) }
        source.fail("c1", with: StaticGroupsSource.tooManyRequests(retryAfter: asked))
        let until = clock.date.addingTimeInterval(hold.held)
        let first = await expectError { try await service.decide("c1") }
        #expect(first?.httpStatus == 429)
        #expect(first?.retryAfter == until)
        let held = await expectError { try await service.decide("c2") }
        #expect(held?.code == .rateLimitExceeded)
        #expect(held?.httpStatus == nil)
        #expect(held?.attempts == 0)
        #expect(held?.retryAfter == until)
        clock.advance(by: .seconds(hold.held))
        #expect(try await service.decide("c2").source == .live)
        #expect(source.callCount == 2)
        let milliseconds = { (date: Date) in String(Int64(date.timeIntervalSince1970 * 1000)) }
        #expect(
            observer.events("rate limited")
                == [
                    "rate limited: customer-groups until \(milliseconds(until)) (asked \(asked.map(milliseconds) ?? "none"))"
                ]
        )
    }

    @Test("a call that waited for a token while another process got a 429 sends nothing before Retry-After")
    func gateClosedDuringTokenWait() async throws {
        let stub = StubGroupsSource(clock: clock.now)
        let retryAfter = clock.date.addingTimeInterval(10)
        let sleeps = Locked(0)
        // The token wait is where another process's 429 lands: its instant is in the shared cache
        // by the time this process wakes up.
        let timeSource = TimeSource(now: clock.now) { duration in
            if sleeps.withLock({ count in
                count += 1
                return count == 1
            }) {
                try? await shared.setRateLimitedUntil(retryAfter, for: .customerGroups, in: .sandbox)
            }
            clock.advance(by: duration)
        }
        let service = try ServiceHarness(source: stub, sharedCache: shared, time: .custom(timeSource)) {
            $0.rateLimits.maximumRateLimitWait = .seconds(1)
            // A new fleet bucket starts with the burst less a second's reservations: 5 of 10.
            $0.rateLimits.requestBurst = [.sandbox: 10]
        }
        for index in 0..<5 { #expect(try await service.decide("c\(index)").source == .live) }
        // The sixth call waits 200 ms for its token, and meanwhile the gate closes for 10 seconds,
        // longer than this service may wait.
        let error = await expectError { try await service.decide("c5") }
        #expect(error?.code == .rateLimitExceeded)
        #expect(error?.httpStatus == nil)
        #expect(error?.retryAfter == retryAfter)
        #expect(stub.requests == ["c0", "c1", "c2", "c3", "c4"])
    }

    @Test("a far instant left in the shared cache holds an hour from when it was first read, then no longer")
    func farSharedInstantIsClamped() async throws {
        try await shared.setRateLimitedUntil(
            clock.date.addingTimeInterval(Self.tenYears),
            for: .customerGroups,
            in: .sandbox
        )
        let service = try makeService(shared: shared)
        let held = await expectError { try await service.decide("c1") }
        #expect(held?.code == .rateLimitExceeded)
        #expect(held?.retryAfter == clock.date.addingTimeInterval(3600))
        clock.advance(by: .seconds(1800))
        let still = await expectError { try await service.decide("c1") }
        #expect(still?.retryAfter == clock.date.addingTimeInterval(1800))
        clock.advance(by: .seconds(1800))
        #expect(try await service.decide("c1").source == .live)
        #expect(source.callCount == 1)
    }

    @Test("a process re-reads the shared instant: a key deleted in the shared cache opens its gate")
    func deletedSharedKeyReopens() async throws {
        let first = try makeService(shared: shared)
        let second = try makeService(shared: shared)
        source.fail("c1", with: StaticGroupsSource.tooManyRequests(retryAfter: clock.date.addingTimeInterval(600)))
        _ = await expectError { try await first.decide("c1") }
        let held = await expectError { try await second.decide("c2") }
        #expect(held?.retryAfter == clock.date.addingTimeInterval(600))
        // An operator deletes the key: both processes send again.
        shared.removeRateLimit(.customerGroups, in: .sandbox)
        #expect(try await second.decide("c2").source == .live)
        #expect(try await first.decide("c3").source == .live)
        #expect(source.callCount == 3)
    }

    @Test("Get Group Members has its own budget, and its 429 holds that endpoint only")
    func membersHaveTheirOwnGate() async throws {
        let service = try makeService()
        let gate = service.rateLimitGate
        // The sandbox's 5 a second for each endpoint: spending the members' leaves decisions alone.
        for _ in 0..<5 {
            try await gate.send(.groupMembers, in: .sandbox) { () throws(AppStoreGroupsError) in }
        }
        let spent = await expectError {
            try await gate.send(.groupMembers, in: .sandbox) { () throws(AppStoreGroupsError) in }
        }
        #expect(spent?.code == .rateLimitExceeded)
        #expect(spent?.message.contains("group-members") == true)
        #expect(try await service.decide("c1").source == .live)
        clock.advance(by: .seconds(1))
        // A 429 on members closes members only.
        let retryAfter = clock.date.addingTimeInterval(120)
        let limited = await expectError {
            try await gate.send(.groupMembers, in: .sandbox) { () throws(AppStoreGroupsError) in
                throw StaticGroupsSource.tooManyRequests(retryAfter: retryAfter)
            }
        }
        #expect(limited?.httpStatus == 429)
        #expect(await gate.retryAfter(.groupMembers, in: .sandbox) == retryAfter)
        #expect(await gate.retryAfter(.customerGroups, in: .sandbox) == nil)
        #expect(try await service.decide("c2").source == .live)
        let held = await expectError {
            try await gate.send(.groupMembers, in: .sandbox) { () throws(AppStoreGroupsError) in }
        }
        #expect(held?.retryAfter == retryAfter)
        #expect(held?.httpStatus == nil)
    }
}
