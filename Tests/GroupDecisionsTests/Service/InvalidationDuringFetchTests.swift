import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// An invalidation that arrives while a fetch for the customer is on its way: what that fetch
/// brings back is older than the invalidation, and is served to no caller who began after it.
@Suite("Invalidation during a fetch: nothing fetched before it is served after it")
struct InvalidationDuringFetchTests {
    /// One customer's invalidation in a process of its own, everyone's with a shared cache.
    @Test(
        "a revocation processed during a fetch: later calls fetch again, and the old answer is kept nowhere",
        arguments: [false, true]
    )
    func invalidationDuringFetch(all: Bool) async throws {
        // Apple answers with the request's state after 400 ms: the first request predates the
        // revocation, so it carries the family group.
        let stub = StubGroupsSource(delay: .milliseconds(400))
        let shared = all ? InMemoryGroupsCache() : nil
        let service = try GroupDecisionServiceTests.service(stub, shared: shared)
        let before = Task { try await service.decide("c1") }
        try await waitUntil { !stub.requests.isEmpty }
        // The revocation: Apple's state changes, and the notification handler invalidates.
        stub.answer { _, _ in .groups(Array(#"{"groups":[]}"#.utf8)) }
        try await all ? service.invalidateAll() : service.invalidate(anyTransactionID: "c1")
        // A call made after the invalidation, while the old fetch may still be on its way.
        let after = try await service.decide("c1")
        #expect(after.source == .live)
        #expect(after.decision.capabilities.isEmpty)
        // The old fetch answers its own callers, and is not kept.
        #expect(try await before.value.decision.capabilities.sorted() == Families.capabilities)
        #expect(try await service.decide("c1").decision.capabilities.isEmpty)
        if let shared {
            let kept = try #require(try await shared.answer(anyTransactionID: "c1", in: .sandbox))
            #expect(try GetCustomerGroupsResponse(jsonBytes: kept.body) == Families.noGroups)
        }
        #expect(stub.requests == ["c1", "c1"])
    }

    /// Found by a review (fixed): a flight's not-found reached every caller who joined it, the permit's
    /// `answers(callerBegunAt:countCheckInterval:)` check applied to answers only: a caller who began after another
    /// process's invalidation (the purchase's notification) was refused with the not-found of a request sent before it.
    @Test("a caller who begins after another process's invalidation returned is not refused with an older not-found")
    func joinerAfterRemoteInvalidationGetsNoOldNotFound() async throws {
        let fleet = try TwoProcessFleet(customers: [:])
        // Apple does not know c0 yet when process A's request reaches it; the answer is held.
        fleet.gated.close()
        let leader = Task { await expectError { try await fleet.processA.decide("c0") }?.code }
        try await fleet.gated.waitForCalls(1)
        #expect(fleet.gated.startedCalls == 1)
        // The purchase completes; its notification invalidates c0 through process B.
        fleet.inner.setAnswer(Families.member, for: "c0")
        try await fleet.processB.invalidate(anyTransactionID: "c0")
        fleet.clock.advance(by: .seconds(1))
        // A request that begins after the invalidation returned: it joins A's flight, begun before.
        let late = try await fleet.lateCallerOfA { try? await fleet.processA.decide("c0").source }
        fleet.gated.open()
        #expect(await leader.value == .transactionIDNotFound)
        // Before the fix: refused with transaction-id-not-found.
        #expect(await late.value == .live)
    }

    /// Found by a review (fixed): a `.stale` answer was exempt from the permit's check, so a caller
    /// who began after another process's invalidation joined a flight begun before it and was
    /// served its stale fallback (`budget`, fetched at 1_800_000_000, before the invalidation).
    @Test("a caller who begins after another process's invalidation returned is not served the old answer stale")
    func joinerAfterRemoteInvalidationGetsNoOldStaleAnswer() async throws {
        let fleet = try TwoProcessFleet(customers: Families.customers(1))
        let firstFetch = fleet.clock.date
        #expect(try await fleet.processA.decide("c0").source == .live)
        #expect(fleet.gated.startedCalls == 1)
        // Past the time to live: a refresh of c0 in process A reaches Apple and is held there.
        fleet.clock.advance(by: .seconds(400))
        fleet.inner.fail("c0", with: StaticGroupsSource.tooManyRequests(retryAfter: nil))
        fleet.gated.close()
        let leader = Task { try? await fleet.processA.decide("c0") }
        try await fleet.gated.waitForCalls(2)
        #expect(fleet.gated.startedCalls == 2)
        // Process B invalidates c0; the call returns once every process must have read the count.
        try await fleet.processB.invalidate(anyTransactionID: "c0")
        fleet.clock.advance(by: .seconds(1))
        let late = try await fleet.lateCallerOfA { try? await fleet.processA.decide("c0") }
        fleet.gated.open()
        _ = await leader.value
        let served = await late.value
        #expect(
            served.map { $0.fetchedAt > firstFetch } ?? true,
            "served \(String(describing: served?.source)) \(String(describing: served?.staleReason)) fetched at \(String(describing: served?.fetchedAt.timeIntervalSince1970))"
        )
    }
}

/// Two services sharing one in-memory cache on one manual clock, process A's calls to Apple behind
/// a gate: the setting of the late-caller tests.
struct TwoProcessFleet {
    let clock = ManualClock()
    let inner: StaticGroupsSource
    let gated: GatedGroupsSource
    let processA: ServiceHarness<GatedGroupsSource>
    let processB: GroupDecisionService

    init(customers: [String: GetCustomerGroupsResponse]) throws {
        let shared = InMemoryGroupsCache(now: clock.now)
        inner = StaticGroupsSource(customers)
        gated = GatedGroupsSource(inner)
        processA = try ServiceHarness(
            source: gated,
            sharedCache: shared,
            clock: clock,
            configuration: .exactCounts(burst: 100)
        )
        // Process B only invalidates: it never reaches the gate.
        processB = try processA.another(sharedCache: shared, configuration: .exactCounts(burst: 100)).service
    }

    /// Starts a call in process A and returns once it has missed its copy and joined the flight
    /// under way (its cache miss seen, then a moment for it to join).
    func lateCallerOfA<T: Sendable>(_ call: @escaping @Sendable () async -> T) async throws -> Task<T, Never> {
        let missesBefore = processA.observer.events("cache miss").count
        let late = Task { await call() }
        try await waitUntil { processA.observer.events("cache miss").count > missesBefore }
        try await Task.sleep(for: .milliseconds(200))
        return late
    }
}
