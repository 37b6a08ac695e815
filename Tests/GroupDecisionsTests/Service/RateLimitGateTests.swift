import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// The rate-limit gate: holds cut to the longest hold, instants read back from the shared cache
/// rather than pinned, and a budget and a gate per endpoint.
@Suite("Rate-limit gate")
struct RateLimitGateTests {
    static let tenYears: TimeInterval = 315_360_000

    static func service(
        _ source: StaticGroupsSource,
        clock: ManualClock,
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

    static func source() -> StaticGroupsSource {
        StaticGroupsSource(["c1": Families.member, "c2": Families.member, "c3": Families.member])
    }

    @Test("a Retry-After ten years ahead holds every decision for an hour, not ten years")
    func farRetryAfterIsCut() async throws {
        let clock = ManualClock()
        let source = Self.source()
        let observer = RecordingObserver()
        let service = try Self.service(source, clock: clock, observer: observer)
        let named = clock.date.addingTimeInterval(Self.tenYears)
        source.fail("c1", with: StaticGroupsSource.tooManyRequests(retryAfter: named))
        let first = await expectError { try await service.decision(anyTransactionID: "c1", environment: .sandbox) }
        #expect(first?.httpStatus == 429)
        #expect(first?.retryAfter == clock.date.addingTimeInterval(3600))
        let held = await expectError { try await service.decision(anyTransactionID: "c2", environment: .sandbox) }
        #expect(held?.code == .rateLimitExceeded)
        #expect(held?.retryAfter == clock.date.addingTimeInterval(3600))
        clock.advance(by: .seconds(3600))
        #expect(try await service.decision(anyTransactionID: "c2", environment: .sandbox).source == .live)
        #expect(source.callCount == 2)
        let ms = Int64(clock.date.timeIntervalSince1970 * 1000)
        #expect(
            observer.events("rate limited")
                == ["rate limited: customer-groups until \(ms) (asked \(ms - 3_600_000 + Int64(Self.tenYears * 1000)))"]
        )
    }

    @Test("the longest hold is configurable")
    func configurableHold() async throws {
        let clock = ManualClock()
        let source = Self.source()
        let service = try Self.service(source, clock: clock) { $0.rateLimits.maximumRateLimitHold = .seconds(600) }
        source.fail("c1", with: StaticGroupsSource.tooManyRequests(retryAfter: clock.date.addingTimeInterval(7200)))
        let first = await expectError { try await service.decision(anyTransactionID: "c1", environment: .sandbox) }
        #expect(first?.retryAfter == clock.date.addingTimeInterval(600))
        #expect(throws: AppStoreGroupsError.self) {
            try Self.service(source, clock: clock) { $0.rateLimits.maximumRateLimitHold = .zero }
        }
    }

    @Test("a server clock two hours behind Apple's: a 30-second Retry-After holds an hour at most")
    func clockBehindApple() async throws {
        let clock = ManualClock()
        let source = Self.source()
        let service = try Self.service(source, clock: clock)
        // Apple's clock reads two hours later than this server's; Apple asks for 30 seconds.
        let apple = clock.date.addingTimeInterval(7200)
        source.fail("c1", with: StaticGroupsSource.tooManyRequests(retryAfter: apple.addingTimeInterval(30)))
        let first = await expectError { try await service.decision(anyTransactionID: "c1", environment: .sandbox) }
        #expect(first?.retryAfter == clock.date.addingTimeInterval(3600))
        clock.advance(by: .seconds(3600))
        #expect(try await service.decision(anyTransactionID: "c2", environment: .sandbox).source == .live)
    }

    @Test("a 429 without a usable Retry-After holds for a minute; one in the past for a second")
    func holdsWithoutAnInstant() async throws {
        let clock = ManualClock()
        let source = Self.source()
        let service = try Self.service(source, clock: clock)
        source.fail("c1", with: StaticGroupsSource.tooManyRequests(retryAfter: nil))
        let first = await expectError { try await service.decision(anyTransactionID: "c1", environment: .sandbox) }
        #expect(first?.retryAfter == clock.date.addingTimeInterval(60))
        clock.advance(by: .seconds(60))
        source.fail("c1", with: StaticGroupsSource.tooManyRequests(retryAfter: clock.date.addingTimeInterval(-5)))
        let past = await expectError { try await service.decision(anyTransactionID: "c1", environment: .sandbox) }
        #expect(past?.retryAfter == clock.date.addingTimeInterval(1))
    }

    @Test("a far instant left in the shared cache holds an hour from when it was first read, then no longer")
    func farSharedInstantIsClamped() async throws {
        let clock = ManualClock()
        let shared = InMemoryGroupsCache(now: clock.now)
        try await shared.setRateLimitedUntil(
            clock.date.addingTimeInterval(Self.tenYears),
            for: .customerGroups,
            in: .sandbox
        )
        let source = Self.source()
        let service = try Self.service(source, clock: clock, shared: shared)
        let held = await expectError { try await service.decision(anyTransactionID: "c1", environment: .sandbox) }
        #expect(held?.code == .rateLimitExceeded)
        #expect(held?.retryAfter == clock.date.addingTimeInterval(3600))
        clock.advance(by: .seconds(1800))
        let still = await expectError { try await service.decision(anyTransactionID: "c1", environment: .sandbox) }
        #expect(still?.retryAfter == clock.date.addingTimeInterval(1800))
        clock.advance(by: .seconds(1800))
        #expect(try await service.decision(anyTransactionID: "c1", environment: .sandbox).source == .live)
        #expect(source.callCount == 1)
    }

    @Test("a process re-reads the shared instant: a key deleted in the shared cache opens its gate")
    func deletedSharedKeyReopens() async throws {
        let clock = ManualClock()
        let shared = InMemoryGroupsCache(now: clock.now)
        let source = Self.source()
        let first = try Self.service(source, clock: clock, shared: shared)
        let second = try Self.service(source, clock: clock, shared: shared)
        source.fail("c1", with: StaticGroupsSource.tooManyRequests(retryAfter: clock.date.addingTimeInterval(600)))
        _ = await expectError { try await first.decision(anyTransactionID: "c1", environment: .sandbox) }
        let held = await expectError { try await second.decision(anyTransactionID: "c2", environment: .sandbox) }
        #expect(held?.retryAfter == clock.date.addingTimeInterval(600))
        // An operator deletes the key: both processes send again.
        shared.removeRateLimit(.customerGroups, in: .sandbox)
        #expect(try await second.decision(anyTransactionID: "c2", environment: .sandbox).source == .live)
        #expect(try await first.decision(anyTransactionID: "c3", environment: .sandbox).source == .live)
        #expect(source.callCount == 3)
    }

    @Test("while the shared cache is unavailable, this process's own 429 holds it")
    func ownHoldWithoutTheSharedCache() async throws {
        let clock = ManualClock()
        let source = Self.source()
        let service = try Self.service(source, clock: clock, shared: ScriptedGroupsCache.unreachable())
        source.fail("c1", with: StaticGroupsSource.tooManyRequests(retryAfter: clock.date.addingTimeInterval(20)))
        _ = await expectError { try await service.decision(anyTransactionID: "c1", environment: .sandbox) }
        let held = await expectError { try await service.decision(anyTransactionID: "c2", environment: .sandbox) }
        #expect(held?.retryAfter == clock.date.addingTimeInterval(20))
        #expect(source.callCount == 1)
    }

    @Test("Get Group Members has its own budget, and its 429 holds that endpoint only")
    func membersHaveTheirOwnGate() async throws {
        let clock = ManualClock()
        let source = Self.source()
        let service = try Self.service(source, clock: clock)
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
        #expect(try await service.decision(anyTransactionID: "c1", environment: .sandbox).source == .live)
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
        #expect(try await service.decision(anyTransactionID: "c2", environment: .sandbox).source == .live)
        let held = await expectError {
            try await gate.send(.groupMembers, in: .sandbox) { () throws(AppStoreGroupsError) in }
        }
        #expect(held?.retryAfter == retryAfter)
        #expect(held?.httpStatus == nil)
    }
}
