import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// Records stale answers served: reason and age.
final class StaleRecorder: GroupDecisionObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    var events: [String] { lock.withLock { stored } }

    func staleServed(_ event: GroupDecisionEvent.StaleServed) {
        let milliseconds =
            event.age.components.seconds * 1000 + event.age.components.attoseconds / 1_000_000_000_000_000
        lock.withLock { stored.append("\(event.reason) \(milliseconds) ms: \(event.error.code)") }
    }
}

/// Freshness that bends with the budget: refresh ahead, refreshes behind first fetches, stale
/// answers up to the maximum age, and nothing from an old answer after an invalidation.
///
/// The budgets are so slow (one token in 10,000 seconds) that no token comes back during a test,
/// whatever the manual clock does, so every count is exact.
@Suite("Freshness: refresh ahead and a time to live that bends with the budget")
struct FreshnessTests {

    static func customers(_ count: Int) -> [String: GetCustomerGroupsResponse] { Families.customers(count) }

    static func configuration(
        burst: Double = 5,
        _ configure: (inout GroupDecisionService.Configuration) -> Void = { _ in }
    ) -> GroupDecisionService.Configuration {
        var configuration = GroupDecisionService.Configuration.exactCounts(burst: burst)
        configure(&configuration)
        return configuration
    }

    static func service(
        _ source: some GroupsSource,
        clock: ManualClock,
        shared: (any SharedGroupsCache)? = nil,
        observer: (any GroupDecisionObserver)? = nil,
        configuration: GroupDecisionService.Configuration,
        realSleep: Bool = false
    ) throws -> GroupDecisionService {
        try ServiceHarness(
            source: source,
            sharedCache: shared,
            clock: clock,
            time: realSleep ? .manualWithRealSleep : .manual,
            alsoTelling: observer,
            configuration: configuration
        )
        .service
    }

    static func decide(_ service: GroupDecisionService, _ id: String) async throws -> ServedDecision {
        try await service.decision(anyTransactionID: id, environment: .sandbox)
    }

    @Test(
        "the configuration's freshness values are checked",
        arguments: [
            ("maximumStaleness -1", "freshness.maximumStaleness must not be negative"),
            ("refreshAfter 0", "freshness.refreshAfter must be positive and less than freshness.timeToLive, or nil"),
            ("refreshAfter 300", "freshness.refreshAfter must be positive and less than freshness.timeToLive, or nil"),
            ("refreshSpread -1", "freshness.refreshSpread must not be negative"),
            ("refreshReserve -0.01", "rateLimits.refreshReserve must be at least 0 and less than 1"),
            ("refreshReserve 1", "rateLimits.refreshReserve must be at least 0 and less than 1"),
            ("maximumRefreshesInFlight 0", "maximumRefreshesInFlight must be at least 1"),
        ]
    )
    func configurationChecked(setting: String, message: String) throws {
        var configuration = GroupDecisionService.Configuration()
        #expect(configuration.problem == nil)
        // A fixed time to live, with no reserve: the edges of every range.
        configuration.freshness.maximumStaleness = .zero
        configuration.freshness.refreshAfter = nil
        configuration.rateLimits.refreshReserve = 0
        #expect(configuration.problem == nil)
        let parts = setting.split(separator: " ")
        let value = try #require(Double(String(parts[1])))
        switch parts[0] {
        case "maximumStaleness": configuration.freshness.maximumStaleness = .seconds(value)
        case "refreshAfter": configuration.freshness.refreshAfter = .seconds(value)
        case "refreshSpread": configuration.freshness.refreshSpread = .seconds(value)
        case "refreshReserve": configuration.rateLimits.refreshReserve = value
        default: configuration.maximumRefreshesInFlight = Int(value)
        }
        #expect(configuration.problem == message)
        #expect(throws: AppStoreGroupsError.self) {
            try ServiceHarness(source: StaticGroupsSource([:]), time: .system, configuration: configuration)
        }
    }

    @Test("a refresh keeps the reserve: a fifth of the burst, at most the burst less one")
    func reserveArithmetic() {
        let configuration = RateLimitGate.Configuration()
        #expect(configuration.reserve(burst: 50) == 10)
        #expect(configuration.reserve(burst: 5) == 1)
        #expect(configuration.reserve(burst: 1) == 0)
        #expect(configuration.reserve(burst: 1.1) == 0.1 + 0.0 || abs(configuration.reserve(burst: 1.1) - 0.1) < 1e-9)
        var bucket = TokenBucket(rate: 0.0001, burst: 5, now: Date(timeIntervalSince1970: 0))
        let now = Date(timeIntervalSince1970: 0)
        for _ in 0..<3 { #expect(bucket.take(now: now, keeping: 1).taken) }
        // Two banked: one taken leaves the reserve of one; the next would take it.
        #expect(bucket.take(now: now, keeping: 1).taken)
        let refused = bucket.take(now: now, keeping: 1)
        #expect(!refused.taken)
        #expect(refused.wait == .seconds(10_000))
        // A first fetch takes the reserve.
        #expect(bucket.take(now: now, maximumWait: .zero).taken)
    }

    @Test(
        "budget low: an expired answer is served stale at once with its age, a new customer's first fetch gets the reserve, the next is refused at once",
        arguments: [false, true]
    )
    func staleOnBudget(shared: Bool) async throws {
        let clock = ManualClock()
        let source = StaticGroupsSource(Self.customers(20))
        let observer = StaleRecorder()
        let service = try Self.service(
            source,
            clock: clock,
            shared: shared ? InMemoryGroupsCache(now: clock.now) : nil,
            observer: observer,
            configuration: Self.configuration()
        )
        // Burst 5, reserve 1: four first fetches leave the reserve.
        for index in 0..<4 { #expect(try await Self.decide(service, "c\(index)").source == .live) }
        clock.advance(by: .seconds(400))
        let stale = try await Self.decide(service, "c0")
        #expect(stale.source == .stale)
        #expect(stale.staleReason == .budget)
        #expect(stale.age == .seconds(400))
        #expect(stale.fetchedAt == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(stale.decision.capabilities.sorted() == Families.capabilities)
        #expect(
            stale.jsonString(pretty: false).hasSuffix(
                #""decisionId":"\#(stale.decisionID)","groupsStaleReason":"budget","groupsAgeMilliseconds":400000}"#
            )
        )
        #expect(
            stale.jsonString(pretty: true).hasSuffix(
                #""groupsStaleReason": "budget",\#n  "groupsAgeMilliseconds": 400000\#n}"#
            )
        )
        #expect(observer.events == ["budget 400000 ms: rate-limit-exceeded"])
        // A customer with no answer takes the reserve.
        #expect(try await Self.decide(service, "c10").source == .live)
        // Beyond the budget: refused at once, nothing waited for.
        let refused = await expectError { try await Self.decide(service, "c11") }
        #expect(refused?.code == .rateLimitExceeded)
        #expect(refused?.httpStatus == nil)
        #expect(clock.sleeps == [])
        // The expired customer is still served, stale.
        #expect(try await Self.decide(service, "c1").staleReason == .budget)
        #expect(source.callCount == 5)
    }

    @Test("a refresh of an expired answer goes while the budget has more than the reserve, never into it")
    func refreshKeepsReserve() async throws {
        let clock = ManualClock()
        let source = StaticGroupsSource(Self.customers(20))
        let shared = InMemoryGroupsCache(now: clock.now)
        let service = try Self.service(source, clock: clock, shared: shared, configuration: Self.configuration())
        for index in 0..<3 { _ = try await Self.decide(service, "c\(index)") }
        clock.advance(by: .seconds(301))
        // Two banked: the refresh takes one and leaves the reserve.
        let refreshed = try await Self.decide(service, "c0")
        #expect(refreshed.source == .live)
        #expect(refreshed.staleReason == nil)
        #expect(refreshed.age == nil)
        #expect(try await Self.decide(service, "c1").source == .stale)
        #expect(try await Self.decide(service, "c2").source == .stale)
        #expect(source.callCount == 4)
        // The reserve is the first fetches'.
        #expect(try await Self.decide(service, "c3").source == .live)
        #expect(source.callCount == 5)
    }

    @Test("past the maximum age nothing of the old answer is served: a first fetch, or the rate-limit error")
    func pastMaximumAge() async throws {
        let clock = ManualClock()
        let source = StaticGroupsSource(Self.customers(20))
        let service = try Self.service(
            source,
            clock: clock,
            configuration: Self.configuration(burst: 3) { $0.freshness.maximumStaleness = .seconds(300) }
        )
        // Burst 3, reserve 0.6: c0 and c1 leave one token.
        _ = try await Self.decide(service, "c0")
        _ = try await Self.decide(service, "c1")
        clock.advance(by: .milliseconds(599_999))
        #expect(try await Self.decide(service, "c0").age == .milliseconds(599_999))
        clock.advance(by: .milliseconds(1))
        // At the maximum age c0 is a first fetch: it takes the last token.
        #expect(try await Self.decide(service, "c0").source == .live)
        clock.advance(by: .seconds(600))
        let refused = await expectError { try await Self.decide(service, "c1") }
        #expect(refused?.code == .rateLimitExceeded)
        #expect(source.callCount == 3)
    }

    @Test("stale-if-error never serves past the maximum age, and says why")
    func staleIfErrorCapped() async throws {
        let clock = ManualClock()
        let source = StaticGroupsSource(Self.customers(2))
        let observer = StaleRecorder()
        let service = try Self.service(
            source,
            clock: clock,
            observer: observer,
            configuration: Self.configuration(burst: 100) {
                $0.freshness.staleIfError = .seconds(3600)
                $0.freshness.maximumStaleness = .seconds(600)
            }
        )
        _ = try await Self.decide(service, "c0")
        source.fail("c0", with: AppStoreGroupsError(code: .generalInternalError, message: "down", httpStatus: 500))
        clock.advance(by: .seconds(899))
        let stale = try await Self.decide(service, "c0")
        #expect(stale.staleReason == .error)
        #expect(
            stale.jsonString(pretty: false).hasSuffix(#""groupsStaleReason":"error","groupsAgeMilliseconds":899000}"#)
        )
        clock.advance(by: .seconds(1))
        let error = await expectError { try await Self.decide(service, "c0") }
        #expect(error?.code == .generalInternalError)
        #expect(observer.events == ["error 899000 ms: general-internal-error"])
    }

    @Test(
        "after an invalidation nothing of the old answer is served stale, by customer or by group",
        arguments: [false, true]
    )
    func invalidationEndsStale(byGroup: Bool) async throws {
        let clock = ManualClock()
        let source = StaticGroupsSource(Self.customers(20))
        let shared = InMemoryGroupsCache(now: clock.now)
        let service = try Self.service(
            source,
            clock: clock,
            shared: shared,
            configuration: Self.configuration(burst: 2)
        )
        _ = try await Self.decide(service, "c0")
        clock.advance(by: .seconds(400))
        // One token left, the reserve (0.4) would go below it: stale.
        #expect(try await Self.decide(service, "c0").source == .stale)
        if byGroup {
            try await service.invalidate(groupID: "g1")
        } else {
            try await service.invalidate(anyTransactionID: "c0")
        }
        #expect(try await shared.answer(anyTransactionID: "c0", in: .sandbox) == nil)
        // A first fetch now: it takes the last token.
        let fetched = try await Self.decide(service, "c0")
        #expect(fetched.source == .live)
        #expect(fetched.fetchedAt == clock.date)
        #expect(source.callCount == 2)
    }

    @Test(
        "a hot customer is answered from the cache while one refresh runs for two processes; they never wait for Apple"
    )
    func refreshAheadOncePerFleet() async throws {
        let clock = ManualClock()
        let gated = GatedGroupsSource(StaticGroupsSource(Self.customers(2)))
        let shared = InMemoryGroupsCache(now: clock.now)
        // No spread: the test pins the refresh instant at three quarters of the time to live.
        let configuration = Self.configuration(burst: 100) {
            $0.freshness.refreshAfter = .seconds(225)
            $0.freshness.refreshSpread = .zero
        }
        let first = try Self.service(gated, clock: clock, shared: shared, configuration: configuration, realSleep: true)
        let second = try Self.service(
            gated,
            clock: clock,
            shared: shared,
            configuration: configuration,
            realSleep: true
        )
        #expect(try await Self.decide(first, "c0").source == .live)
        let runs = [Task { try await first.run() }, Task { try await second.run() }]
        defer { for run in runs { run.cancel() } }
        try await waitUntil { first.refreshes.workerCount == 4 && second.refreshes.workerCount == 4 }
        gated.close()
        // Not yet due: nothing refreshed.
        clock.advance(by: .seconds(224))
        #expect(try await Self.decide(first, "c0").source == .cache)
        #expect(first.refreshes.count == 0)
        clock.advance(by: .seconds(16))
        for _ in 0..<20 {
            #expect(try await Self.decide(first, "c0").source == .cache)
            #expect(try await Self.decide(second, "c0").source == .cache)
        }
        try await gated.waitForCalls(2)
        try await waitUntil { second.refreshes.count == 0 }
        #expect(gated.startedCalls == 2)
        gated.open()
        try await waitUntil { first.refreshes.count == 0 }
        // Past the first answer's time to live: both serve the refreshed one from the cache.
        clock.advance(by: .seconds(70))
        for service in [first, second] {
            let served = try await Self.decide(service, "c0")
            #expect(served.source == .cache)
            #expect(served.fetchedAt == Date(timeIntervalSince1970: 1_800_000_240))
        }
        #expect(gated.startedCalls == 2)
    }

    @Test("an invalidation while a refresh ahead is under way: its answer is kept nowhere", arguments: [false, true])
    func invalidationOvertakesRefresh(byGroup: Bool) async throws {
        let clock = ManualClock()
        let inner = StaticGroupsSource(Self.customers(2))
        let gated = GatedGroupsSource(inner)
        let shared = InMemoryGroupsCache(now: clock.now)
        let configuration = Self.configuration(burst: 100) { $0.freshness.refreshAfter = .seconds(150) }
        let service = try Self.service(
            gated,
            clock: clock,
            shared: shared,
            configuration: configuration,
            realSleep: true
        )
        _ = try await Self.decide(service, "c0")
        let run = Task { try await service.run() }
        defer { run.cancel() }
        try await waitUntil { service.refreshes.workerCount == service.configuration.maximumRefreshesInFlight }
        gated.close()
        clock.advance(by: .seconds(200))
        #expect(try await Self.decide(service, "c0").source == .cache)
        try await gated.waitForCalls(2)
        inner.setAnswer(Families.memberOfG2, for: "c0")
        if byGroup {
            try await service.invalidate(groupID: "g1")
        } else {
            try await service.invalidate(anyTransactionID: "c0")
        }
        gated.open()
        try await waitUntil { service.refreshes.count == 0 }
        #expect(try await shared.answer(anyTransactionID: "c0", in: .sandbox) == nil)
        let next = try await Self.decide(service, "c0")
        #expect(next.source == .live)
        #expect(next.groups == Families.memberOfG2)
        #expect(gated.startedCalls == 3)
    }

    @Test(
        "a caller who joined a refresh ahead that fetched nothing gets its groups from a flight of its own",
        .timeLimit(.minutes(5))
    )
    func joinedRefreshThatFetchedNothing() async throws {
        let clock = ManualClock()
        let inner = StaticGroupsSource(Self.customers(1))
        let gated = GatedGroupsSource(inner)
        let configuration = Self.configuration(burst: 100) { $0.freshness.refreshAfter = .seconds(150) }
        let service = try Self.service(gated, clock: clock, configuration: configuration, realSleep: true)
        _ = try await Self.decide(service, "c0")
        let run = Task { try await service.run() }
        defer { run.cancel() }
        try await waitUntil { service.refreshes.workerCount == service.configuration.maximumRefreshesInFlight }
        // Due a refresh ahead: served from the cache while the refresh, which Apple will fail, is held.
        inner.fail("c0", with: AppStoreGroupsError(code: .timeout, message: "slow"))
        gated.close()
        clock.advance(by: .seconds(200))
        #expect(try await Self.decide(service, "c0").source == .cache)
        try await gated.waitForCalls(2)
        inner.fail("c0", with: nil)
        inner.setAnswer(Families.memberOfG2, for: "c0")
        // Past the time to live: a miss, which joins the refresh under way.
        clock.advance(by: .seconds(200))
        let caller = Task { try await Self.decide(service, "c0") }
        try await Task.sleep(for: .milliseconds(200))
        gated.open()
        let served = try await caller.value
        #expect(served.source == .live)
        #expect(served.groups == Families.memberOfG2)
        #expect(gated.startedCalls == 3)
    }

    @Test("at most the configured refreshes run at once in a process")
    func refreshesInFlightBounded() async throws {
        let clock = ManualClock()
        let gated = GatedGroupsSource(StaticGroupsSource(Self.customers(3)))
        let configuration = Self.configuration(burst: 100) {
            $0.freshness.refreshAfter = .seconds(150)
            $0.maximumRefreshesInFlight = 1
        }
        let service = try Self.service(gated, clock: clock, configuration: configuration, realSleep: true)
        for index in 0..<3 { _ = try await Self.decide(service, "c\(index)") }
        let run = Task { try await service.run() }
        defer { run.cancel() }
        try await waitUntil { service.refreshes.workerCount == service.configuration.maximumRefreshesInFlight }
        gated.close()
        clock.advance(by: .seconds(200))
        for index in 0..<3 { #expect(try await Self.decide(service, "c\(index)").source == .cache) }
        try await gated.waitForCalls(4)
        // One refresh under way, two queued.
        try await Task.sleep(for: .milliseconds(200))
        #expect(gated.startedCalls == 4)
        #expect(service.refreshes.count == 3)
        gated.open()
        try await waitUntil { service.refreshes.count == 0 }
        #expect(gated.startedCalls == 6)
    }

    @Test("the refresh queue holds each customer once, at most its capacity, and nothing without a worker")
    func refreshQueueBounds() async throws {
        #expect(GroupDecisionService.maximumQueuedRefreshes == 1_000)
        let queue = RefreshQueue(capacity: GroupDecisionService.maximumQueuedRefreshes)
        let key = { (index: Int) in CustomerKey(environment: .sandbox, customerID: "c\(index)") }
        #expect(!queue.offer(key(0)))
        queue.join()
        for index in 0..<1_000 { #expect(queue.offer(key(index))) }
        #expect(!queue.offer(key(1_000)))
        #expect(!queue.offer(key(0)))
        #expect(await queue.next() == key(0))
        // Handed to a worker, still held until done.
        #expect(!queue.offer(key(0)))
        queue.done(key(0))
        #expect(queue.offer(key(1_000)))
        queue.leave()
        // The last worker gone: the queue is emptied, nothing accepted.
        #expect(queue.count == 0)
        #expect(!queue.offer(key(1)))
    }

    @Test("run() ends the refreshes under way when cancelled, and returns only after them")
    func runCancelsRefreshes() async throws {
        let clock = ManualClock()
        let gated = GatedGroupsSource(StaticGroupsSource(Self.customers(1)))
        let configuration = Self.configuration(burst: 100) { $0.freshness.refreshAfter = .seconds(150) }
        let service = try Self.service(gated, clock: clock, configuration: configuration, realSleep: true)
        _ = try await Self.decide(service, "c0")
        let run = Task { try await service.run() }
        try await waitUntil { service.refreshes.workerCount == service.configuration.maximumRefreshesInFlight }
        gated.close()
        clock.advance(by: .seconds(200))
        _ = try await Self.decide(service, "c0")
        try await gated.waitForCalls(2)
        run.cancel()
        // The gated call ignores cancellation; opening it lets the refresh's task see it.
        gated.open()
        let result = await run.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(service.refreshes.count == 0)
        #expect(service.refreshes.workerCount == 0)
        #expect(!service.refreshes.offer(CustomerKey(environment: .sandbox, customerID: "c0")))
    }
}
