import Foundation
import GroupDecisionsTesting
import GroupPolicy
import GroupPolicyBasics
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// The rule that a decision joins a fetch under way only if the fetch began less than the
/// invalidation check interval before it: still one request to Apple per customer for a slow
/// fetch, and a replaced flight that the invalidations through its own process still reach.
@Suite("Decision service: a decision joins a fetch under way only if it began less than the check interval after it")
struct FlightJoinTests {
    static let key = CustomerKey(environment: .sandbox, customerID: "c")

    /// The shared cache's calls a failing cache fails (the fleet budget and the 429 gate aside).
    static let cacheCalls: Set<String> = [
        "answer", "invalidationCount", "setAnswer", "setAnswerIfGeneration", "invalidationGeneration",
        "acquireFetchLock", "releaseFetchLock",
    ]

    // MARK: A replaced flight and the invalidations after it

    /// Starts a flight for `key`, then one that replaces it (the first began more than a second before the instant the
    /// second names): the flights on their clock, the first flight's permit, and the two tasks, held at `gate`.
    static func replacedFlight() async throws -> (
        flights: SingleFlight<Int>, clock: ManualClock, gate: Gate, old: ServingPermit, tasks: [Task<Int, any Error>]
    ) {
        let clock = ManualClock()
        let flights = SingleFlight<Int>(now: clock.now)
        let gate = Gate()
        let permits = Locked<[ServingPermit]>([])
        let body = { @Sendable (permit: ServingPermit) async throws(AppStoreGroupsError) -> Int in
            let count = permits.withLock { permits in
                permits.append(permit)
                return permits.count
            }
            await gate.wait()
            return count
        }
        let first = Task { try await flights.run(Self.key, body) }
        while permits.withLock({ $0.count }) < 1 { await Task.yield() }
        clock.advance(by: .seconds(2))
        let since = clock.date.addingTimeInterval(-1)
        let second = Task { try await flights.run(Self.key, joiningFlightsSince: since, body) }
        while permits.withLock({ $0.count }) < 2 { await Task.yield() }
        let old = try #require(permits.withLock { $0.first })
        return (flights, clock, gate, old, [first, second])
    }

    @Test(
        "a flight replaced by a newer one is still overtaken by the customer's, everyone's and its group's invalidation; once both ended it is forgotten, and an invalidation after it reaches the flight under way only",
        arguments: ["customer", "all", "group", "customer after both ended"]
    )
    func replacedFlightInvalidated(_ which: String) async throws {
        let (flights, clock, gate, old, tasks) = try await Self.replacedFlight()
        let ended = which.hasSuffix("after both ended")
        if ended {
            gate.open()
            for task in tasks { _ = try await task.value }
        }
        switch which {
        case "all": flights.invalidateAll()
        case "group": flights.invalidate(groupID: "g1")
        default: flights.invalidate(customerID: "c")
        }
        // Once both ended, a new flight is the only one an invalidation marks.
        let answer = CachedGroupsAnswer(kind: .groups, body: [], fetchedAt: clock.date)
        #expect(old.clears(answer, decoded: Families.member) == ended)
        gate.open()
        #expect(try await tasks[0].value == 1)
        #expect(try await tasks[1].value == 2)
        let next = try await flights.run(Self.key) { (_: ServingPermit) throws(AppStoreGroupsError) in 7 }
        #expect(next == 7)
    }

    @Test(
        "a fetch begun over an interval before a decision, then overtaken by this process's invalidation, answers neither it nor a later one when the shared cache fails",
        .timeLimit(.minutes(5))
    )
    func replacedFlightNotKeptAfterOwnInvalidation() async throws {
        let clock = ManualClock()
        let through = ScriptedGroupsCache(InMemoryGroupsCache(now: clock.now), countsInvalidations: true)
        let apple = StaticGroupsSource(["c": Families.member])
        let gated = GatedGroupsSource(apple)
        let service = try fleetService(gated, through, clock: clock)
        gated.close()
        let first = Task { try await service.decide("c") }
        try await gated.waitForCalls(1)
        // A decision over an interval later joins the fetch, and takes its answer only as a copy the count confirms.
        clock.advance(by: .milliseconds(300))
        let second = Task { try await service.decide("c") }
        // Time for the decision to reach the flight.
        try await Task.sleep(for: .milliseconds(100))
        apple.setAnswer(Families.noGroups, for: "c")
        try await service.invalidate(anyTransactionID: "c")
        // The shared cache fails from then on; the fetches answer (Apple's state when they arrived).
        through.fail(Self.cacheCalls)
        gated.open()
        #expect(try await first.value.decision.capabilities.sorted() == Families.capabilities)
        // The fetch was overtaken and kept nowhere: the second decision fetched again.
        #expect(try await second.value.outcome == ("live", []))
        // Begun after the invalidation returned, the shared cache failing: the second decision's answer, kept here, is
        // served only under a count reading, which fails, so it is fetched again on this process's budget share.
        #expect(try await service.decide("c").outcome == ("live", []))
        #expect(apple.callCount == 3)
    }

    // MARK: Requests to Apple

    /// The shared cache decisions of one process go through: none, a healthy one, or a failing one.
    enum Sharing: String, CaseIterable, Sendable {
        case none, healthy, failing
    }

    // Five decisions for one customer, 300 ms apart on a manual clock (advanced by hand, after each decision reached
    // its flight), while Apple holds its answers. Without a shared cache, or with a healthy one while Apple is slower
    // than the fetch lock wait, they send Apple one request. With the shared cache failing, two: the four later
    // decisions began more than an interval after the fetch, another process's invalidation may have returned since,
    // and no reading of the count can say; they share one fetch of their own, held at Apple while they join it (on a
    // very busy machine one resumed after it ended may fetch once more: three).
    @Test(
        "decisions arriving over several intervals of a slow fetch share its request to Apple, unless no reading of the count can confirm it",
        .timeLimit(.minutes(5)),
        arguments: zip(Sharing.allCases, [1...1, 1...1, 2...3])
    )
    func slowFetch(_ sharing: Sharing, requests: ClosedRange<Int>) async throws {
        let clock = ManualClock()
        let through = ScriptedGroupsCache(InMemoryGroupsCache(now: clock.now), countsInvalidations: true)
        if sharing == .failing { through.fail(Self.cacheCalls) }
        let apple = StaticGroupsSource(["c": Families.member])
        let gated = GatedGroupsSource(apple)
        let harness = try ServiceHarness(
            source: gated,
            sharedCache: sharing == .none ? nil : through,
            clock: clock,
            configuration: .fleet
        )
        let service = harness.service
        gated.close()
        var decisions = [Task { try await service.decide("c") }]
        try await gated.waitForCalls(1)
        for arrived in 2...5 {
            clock.advance(by: .milliseconds(300))
            decisions.append(Task { try await service.decide("c") })
            // The decision reads when it began just after its cache miss, before the clock moves on
            // (on a busy machine its task may start seconds later); then time to reach a flight.
            try await waitUntil { harness.observer.events("cache miss").count >= arrived }
            try await Task.sleep(for: .milliseconds(100))
        }
        if sharing == .failing {
            gated.release()
            try await gated.waitForCalls(2)
            try await Task.sleep(for: .milliseconds(500))
        }
        gated.open()
        for decision in decisions {
            #expect(try await decision.value.decision.capabilities.sorted() == Families.capabilities)
        }
        #expect(requests.contains(apple.callCount))
    }

    @Test(
        "on the real clock, with a fetch lock wait of 300 ms, decisions over a second of a slow fetch send Apple one request",
        .timeLimit(.minutes(5))
    )
    func slowFetchRealClock() async throws {
        let apple = StaticGroupsSource(["c": Families.member])
        let gated = GatedGroupsSource(apple)
        let service = try fleetService(gated, InMemoryGroupsCache()) {
            $0.sharedCache.fetchLockWait = .milliseconds(300)
        }
        gated.close()
        var decisions = [Task { try await service.decide("c") }]
        try await gated.waitForCalls(1)
        for _ in 0..<3 {
            try await Task.sleep(for: .milliseconds(400))
            decisions.append(Task { try await service.decide("c") })
        }
        try await gated.waitForCalls(1)
        gated.open()
        for decision in decisions {
            #expect(try await decision.value.decision.capabilities.sorted() == Families.capabilities)
        }
        #expect(apple.callCount == 1)
    }
}
