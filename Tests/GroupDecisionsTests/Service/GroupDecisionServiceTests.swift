import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// The decision service with an in-process App Store: single flight, freshness, failing closed,
/// the negative cache, invalidation, the budget and the 429 gate, a shared cache, malformed ids.
@Suite("Decision service")
struct GroupDecisionServiceTests {
    /// The manual clock of most tests, and Apple on it.
    let clock = ManualClock()
    let stub: StubGroupsSource

    init() { stub = StubGroupsSource(clock: clock.now) }

    /// A service over `stub`: on `clock`, or on the system clock with the shared cache never skipped as slow (a busy
    /// machine makes every call look slow; the guard's own tests run on a manual clock).
    static func service(
        _ stub: StubGroupsSource,
        clock: ManualClock? = nil,
        shared: (any SharedGroupsCache)? = nil,
        observer: RecordingObserver = RecordingObserver(),
        configure: (inout GroupDecisionService.Configuration) -> Void = { _ in }
    ) throws -> GroupDecisionService {
        try ServiceHarness(
            source: stub,
            sharedCache: shared,
            clock: clock ?? ManualClock(),
            time: clock == nil ? .system : .manual,
            observer: observer
        ) {
            if clock == nil { $0.sharedCache.health.slowCallsInARow = 0 }
            configure(&$0)
        }
        .service
    }

    @Test("50 concurrent calls for one customer send one request")
    func singleFlight() async throws {
        let stub = StubGroupsSource(delay: .milliseconds(200))
        let service = try Self.service(stub)
        let capabilities = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<50 {
                group.addTask { try await service.decide("c1").decision.capabilities.sorted() }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(capabilities == Array(repeating: Families.capabilities, count: 50))
        #expect(stub.requests == ["c1"])
    }

    @Test(
        "an answer is served from the cache until its time to live passes, then fetched again; the policy applies to it per call; by default a failed fetch after the time to live fails closed with the fetch's error"
    )
    func timeToLiveThenFailClosed() async throws {
        let service = try Self.service(stub, clock: clock)
        let first = try await service.decide("c1")
        #expect(first.source == .live)
        #expect(first.fetchedAt == clock.date)
        #expect(first.policyRevision == "49c9b1f4e538bd3a")
        #expect(first.decision.capabilities.sorted() == Families.capabilities)
        clock.advance(by: .seconds(299))
        // The cached answer is evaluated anew, here with an entitlement the first call did not have.
        let second = try await service.decision(
            anyTransactionID: "c1",
            entitlements: ["com.example.recipes.premium"],
            environment: .sandbox
        )
        #expect(second.source == .cache)
        #expect(second.fetchedAt == first.fetchedAt)
        #expect(second.decision.allows("family.premium-recipes"))
        clock.advance(by: .seconds(1))
        let third = try await service.decide("c1")
        #expect(third.source == .live)
        #expect(third.fetchedAt == clock.date)
        #expect(stub.requests == ["c1", "c1"])
        stub.answer { _, _ in StubGroupsSource.internalError }
        clock.advance(by: .seconds(300))
        let error = await expectError { try await service.decide("c1") }
        #expect(error?.code == .generalInternalError)
        // A customer never fetched fails closed too.
        let other = await expectError { try await service.decide("c2") }
        #expect(other?.code == .generalInternalError)
        // No client for production: refused, nothing sent.
        let production = await expectError {
            try await service.decision(anyTransactionID: "c1", environment: .production)
        }
        #expect(production?.code == .invalidArgument)
        #expect(stub.requests == ["c1", "c1", "c1", "c2"])
    }

    @Test("transaction-not-found is remembered for the negative time to live")
    func negativeCache() async throws {
        stub.answer { _, _ in StubGroupsSource.notFound }
        let service = try Self.service(stub, clock: clock) { $0.freshness.negativeTimeToLive = .seconds(30) }
        let first = await expectError { try await service.decide("gone") }
        #expect(first?.code == .transactionIDNotFound)
        clock.advance(by: .seconds(29))
        let cached = await expectError { try await service.decide("gone") }
        #expect(cached?.code == .transactionIDNotFound)
        #expect(cached?.httpStatus == 404)
        #expect(stub.requests == ["gone"])
        stub.answer { _, _ in StubGroupsSource.consumerGroup }
        clock.advance(by: .seconds(1))
        #expect(try await service.decide("gone").source == .live)
        #expect(stub.requests == ["gone", "gone"])
    }

    @Test("invalidating a customer, then everyone, makes the next call fetch")
    func invalidation() async throws {
        let service = try Self.service(stub)
        _ = try await service.decide("a")
        _ = try await service.decide("b")
        try await service.invalidate(anyTransactionID: "a")
        #expect(try await service.decide("a").source == .live)
        #expect(try await service.decide("b").source == .cache)
        try await service.invalidateAll()
        #expect(try await service.decide("a").source == .live)
        #expect(try await service.decide("b").source == .live)
        #expect(stub.requests == ["a", "b", "a", "a", "b"])
        // Two answers of one group each: an entry's 1,024 bytes and the group's 80 (LocalGroupsCacheTests).
        #expect(service.cachedBytes == 2 * (1_024 + 80))
    }

    @Test("after a 429, no request leaves before Retry-After: fail fast, or wait when allowed")
    func rateLimitGate() async throws {
        let retryAfter = clock.date.addingTimeInterval(10)
        stub.answer { _, now in
            now < retryAfter ? StubGroupsSource.tooManyRequests(until: retryAfter) : StubGroupsSource.consumerGroup
        }
        let shared = InMemoryGroupsCache(now: clock.now)
        let service = try Self.service(stub, clock: clock, shared: shared) {
            $0.rateLimits.maximumRateLimitWait = .zero
        }
        // The hold itself, in this process: the rate-limit gate's tests.
        let first = await expectError { try await service.decide("a") }
        #expect(first?.retryAfter == retryAfter)
        // Another process sharing the store is held back too.
        let other = try Self.service(stub, clock: clock, shared: shared) { $0.rateLimits.maximumRateLimitWait = .zero }
        let third = await expectError { try await other.decide("c") }
        #expect(third?.code == .rateLimitExceeded)
        #expect(stub.requests == ["a"])
        // One that may wait 30 seconds waits until the instant, then sends.
        let patient = try Self.service(stub, clock: clock, shared: shared) {
            $0.rateLimits.maximumRateLimitWait = .seconds(30)
        }
        #expect(try await patient.decide("d").source == .live)
        #expect(stub.requests == ["a", "d"])
        #expect(try #require(stub.requestTimes.last) >= retryAfter)
    }

    @Test("the token bucket: the sandbox's 5 a second, then fail fast or wait in turn")
    func budget() async throws {
        let fast = try Self.service(stub, clock: clock) { $0.rateLimits.maximumRateLimitWait = .zero }
        for index in 0..<5 { #expect(try await fast.decide("c\(index)").source == .live) }
        let spent = await expectError { try await fast.decide("c5") }
        #expect(spent?.code == .rateLimitExceeded)
        #expect(spent?.attempts == 0)
        #expect(stub.requests.count == 5)
        let patient = try Self.service(stub, clock: clock) { $0.rateLimits.maximumRateLimitWait = .seconds(1) }
        for index in 0..<7 { _ = try await patient.decide("p\(index)") }
        #expect(clock.sleeps == Array(repeating: .milliseconds(200), count: 2))
        #expect(stub.requests.count == 12)
    }

    @Test(
        "a second process is served the first one's answer, marked cache; the first's invalidation has reached it when it returns"
    )
    func sharedAnswerAndInvalidation() async throws {
        let shared = InMemoryGroupsCache(now: clock.now)
        let first = try Self.service(stub, clock: clock, shared: shared)
        let second = try Self.service(stub, clock: clock, shared: shared)
        #expect(try await first.decide("c1").source == .live)
        clock.advance(by: .seconds(10))
        let served = try await second.decide("c1")
        #expect(served.source == .cache)
        #expect(served.fetchedAt == clock.date.addingTimeInterval(-10))
        #expect(try await second.decide("c1").source == .cache)
        try await first.invalidate(anyTransactionID: "c1")
        #expect(try await shared.answer(anyTransactionID: "c1", in: .sandbox) == nil)
        // The first fetch waited 200 ms for the fleet's first token (a new bucket starts with the
        // burst less a second's reservations: none at the defaults), the invalidation the interval.
        #expect(clock.sleeps == [.milliseconds(200), .milliseconds(250)])
        // The second process's copy, read a moment ago, is not served.
        #expect(try await second.decide("c1").source == .live)
        #expect(stub.requests == ["c1", "c1"])
    }

    @Test("an answer stored between this process's read and its lock is served, not fetched again")
    func answerStoredBeforeTheLock() async throws {
        let shared = InMemoryGroupsCache(now: clock.now)
        let first = try Self.service(stub, clock: clock, shared: shared)
        #expect(try await first.decide("c1").source == .live)
        // The second process reads before the first one's answer is there, then takes the lock the first has released.
        let missing = ScriptedGroupsCache(shared, forwardsBudget: false)
        missing.missAnswerReads(1)
        let second = try Self.service(stub, clock: clock, shared: missing)
        let served = try await second.decide("c1")
        #expect(served.source == .cache)
        #expect(served.fetchedAt == clock.date)
        #expect(served.decision.capabilities.sorted() == Families.capabilities)
        #expect(stub.requests == ["c1"])
        #expect(
            try await shared.acquireFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "x", timeToLive: .seconds(1))
        )
    }

    /// A first read of 200 ms, then polls of 50 + 200 ms until two seconds have passed, on the slow store.
    @Test(
        "a lock whose holder died: waiters poll for the fetch lock wait, two seconds by the clock however slow the store, then fetch themselves",
        arguments: [(0, 40, 2.0), (200, 8, 2.2)]
    )
    func deadLockHolder(readMilliseconds: Int, polls: Int, fetchedAfter: Double) async throws {
        let start = clock.date
        let store = ScriptedGroupsCache(forwardsBudget: false, clock: clock)
        store.delay("answer", by: .milliseconds(readMilliseconds))
        #expect(
            try await store.acquireFetchLock(
                anyTransactionID: "c1",
                in: .sandbox,
                owner: "dead",
                timeToLive: .seconds(10)
            )
        )
        // The slow-call rule is off: this is about the lock wait, not forty polls of the store's time.
        let service = try Self.service(stub, clock: clock, shared: store) { $0.sharedCache.health.slowCallsInARow = 0 }
        #expect(try await service.decide("c1").source == .live)
        #expect(abs(try #require(stub.requestTimes.first).timeIntervalSince(start) - fetchedAfter) < 0.001)
        #expect(clock.sleeps == Array(repeating: .milliseconds(50), count: polls))
        #expect(stub.requests == ["c1"])
    }

    @Test(
        "an unreachable shared cache: decisions from this process's cache, each failure to the observer, never a grant from a failure; an invalidation it did not take is thrown, and this process forgets at once"
    )
    func unreachableStore() async throws {
        let log = RecordingObserver()
        let store = ScriptedGroupsCache.unreachable()
        let service = try Self.service(stub, clock: clock, shared: store, observer: log)
        #expect(try await service.decide("c1").source == .live)
        #expect(try await service.decide("c1").source == .cache)
        #expect(stub.requests == ["c1"])
        // After the failure the store is left alone for 5 seconds, then tried again.
        #expect(store.calls.count(where: { $0 == "answer" }) == 1)
        #expect(try await service.decide("c2").source == .live)
        #expect(store.calls.count(where: { $0 == "answer" }) == 1)
        clock.advance(by: .seconds(5))
        #expect(try await service.decide("c3").source == .live)
        #expect(store.calls.count(where: { $0 == "answer" }) == 2)
        #expect(stub.requests == ["c1", "c2", "c3"])
        // One failure per try: the observer decides how often to say so.
        #expect(
            log.lines == Array(repeating: "shared cache failed: Redis at 127.0.0.1:1: connection refused", count: 2)
        )
        clock.advance(by: .seconds(300))
        stub.answer { _, _ in StubGroupsSource.internalError }
        let error = await expectError { try await service.decide("c1") }
        #expect(error?.code == .generalInternalError)
        #expect(log.lines.count == 3)
        // Reads skip the failed store a while; an invalidation still tries it and throws; this process forgets at once.
        stub.answer { _, _ in StubGroupsSource.consumerGroup }
        #expect(try await service.decide("c4").source == .live)
        let invalidation = await expectError { try await service.invalidate(anyTransactionID: "c4") }
        #expect(invalidation?.code == .sharedCacheFailure)
        #expect(invalidation?.message == "Redis at 127.0.0.1:1: connection refused")
        let all = await expectError { try await service.invalidateAll() }
        #expect(all?.code == .sharedCacheFailure)
        #expect(try await service.decide("c4").source == .live)
        #expect(stub.requests == ["c1", "c2", "c3", "c1", "c4", "c4"])
    }

    static let malformed = [
        "", "has space", "semi;colon", "../../etc", String(repeating: "9", count: 129), "é", "a\u{0}b",
        "sandbox:groups:c1", String(repeating: "9", count: 5000), "*",
    ]

    /// A malformed transaction id is refused before anything else: no budget spent, no flight, no
    /// shared-cache call, whether a decision or an invalidation asks.
    ///
    /// `invalidate(anyTransactionID:)` took any string, so `POST /invalidate?transactionId=a%00b`
    /// answered 200 where `GET /decision` answered 400, each such call wrote a generation key of the
    /// id's size into Redis, and an id holding `:` reached keys outside the customer's own
    /// (`sandbox:groups:c1` under prefix `app` deleted customer c1's answer under `app:sandbox:groups`).
    @Test(
        "a flood of malformed ids spends none of the budget and reaches no cache; a valid customer is served after it"
    )
    func malformedIDsSpendNoBudget() async throws {
        let cache = ScriptedGroupsCache(combinedCalls: .native, forwardsBudget: false, clock: clock)
        let service = try Self.service(stub, clock: clock, shared: cache) {
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

    @Test("a service given two clients for one environment is refused")
    func twoClientsForOneEnvironment() throws {
        let client = { try AppStoreGroupsClient(server: .sandbox, credentials: FakeAppStore.credentials()) }
        let error = #expect(throws: AppStoreGroupsError.self) {
            try GroupDecisionService(policies: Families.policies(), clients: [client(), client()])
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message == "two clients for the Sandbox environment")
    }
}
