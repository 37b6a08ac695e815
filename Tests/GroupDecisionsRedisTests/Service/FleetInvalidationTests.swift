import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// Invalidation across the processes of a fleet: an invalidation made through one process wins over
/// a fetch another process began before it.
@Suite("Decision service: invalidation across a fleet")
struct FleetInvalidationTests {

    /// The services' configuration: a shared cache never skipped as slow (a busy machine makes every
    /// call slow, and a skipped cache is the documented exception these tests do not test).
    static var configuration: GroupDecisionService.Configuration {
        var configuration = GroupDecisionService.Configuration()
        configuration.sharedCache.health.slowCallsInARow = 0
        // The suites here fail the shared cache on purpose: each process then fetches within a
        // share of the budget of its own, which is what they need to see the invalidations race.
        configuration.rateLimits.fallbackShare = 0.25
        // A burst of twice the rate: a new fleet bucket starts with the burst less the rate times
        // the longest wait (none at the defaults), so a first decision finds a token banked and
        // makes no round trip more for the wait of a reserved one.
        configuration.rateLimits.requestBurst = [.sandbox: 10, .production: 100]
        return configuration
    }

    static func service(_ source: some GroupsSource, shared: any SharedGroupsCache) throws -> GroupDecisionService {
        try ServiceHarness(source: source, sharedCache: shared, time: .system, configuration: configuration).service
    }

    /// Service 1 fetches while Apple still lists the group; the customer leaves it and service 2
    /// invalidates; then service 1's answer arrives.
    static func fetchOverrunByInvalidation(
        _ first: any SharedGroupsCache,
        _ second: any SharedGroupsCache,
        invalidate: @Sendable (GroupDecisionService) async throws -> Void = {
            try await $0.invalidate(anyTransactionID: "c1")
        }
    ) async throws -> (inFlight: [String], afterOnFirst: [String], afterOnSecond: [String], calls: Int) {
        let apple = StaticGroupsSource(["c1": Families.member])
        let gated = GatedGroupsSource(apple)
        let service1 = try service(gated, shared: first)
        let service2 = try service(gated, shared: second)
        gated.close()
        let inFlight = Task { try await service1.decision(anyTransactionID: "c1", environment: .sandbox) }
        try await gated.waitForCalls(1)
        // Apple removes the customer from the group; the notification reaches service 2.
        apple.setAnswer(Families.noGroups, for: "c1")
        try await invalidate(service2)
        gated.open()
        let held = try await inFlight.value.decision.capabilities.sorted()
        let afterOnFirst = try await service1.decision(anyTransactionID: "c1", environment: .sandbox)
        let afterOnSecond = try await service2.decision(anyTransactionID: "c1", environment: .sandbox)
        return (
            held, afterOnFirst.decision.capabilities.sorted(), afterOnSecond.decision.capabilities.sorted(),
            apple.callCount
        )
    }

    @Test(
        "an invalidation through one server wins over another server's fetch in flight (real redis-server)",
        .requires(.redisServer)
    )
    func invalidationWinsOverFetchInFlightRedis() async throws {
        let fleet = try await RedisFleet.start()
        defer { fleet.stop() }
        let (first, second) = try fleet.pair(prefix: "fleet")
        let result = try await Self.fetchOverrunByInvalidation(first, second)
        // The call in flight answers with what Apple said when it asked (it began before the
        // invalidation); nothing after the invalidation is served from it, on either server.
        #expect(result.inFlight == Families.capabilities)
        #expect(result.afterOnFirst == [])
        #expect(result.afterOnSecond == [])
        #expect(result.calls == 2)
        #expect(try await second.answer(anyTransactionID: "c1", in: .sandbox)?.body == Array(#"{"groups":[]}"#.utf8))
    }

    @Test("an invalidation through one service wins over another's fetch in flight (in-memory shared cache)")
    func invalidationWinsOverFetchInFlightInMemory() async throws {
        let shared = InMemoryGroupsCache()
        let result = try await Self.fetchOverrunByInvalidation(shared, shared)
        #expect(result.inFlight == Families.capabilities)
        #expect(result.afterOnFirst == [])
        #expect(result.afterOnSecond == [])
        #expect(result.calls == 2)
    }

    @Test(
        "a write with a generation read before an invalidation is refused; one read after is kept",
        .requires(.redisServer)
    )
    func generationGatesWrites() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store(prefix: "gen")
        defer { store.close() }
        let answer = CachedGroupsAnswer(
            kind: .groups,
            body: Array(#"{"groups":[]}"#.utf8),
            fetchedAt: Date(timeIntervalSince1970: 1_700_000_000)
        )
        let zero = try await store.invalidationGeneration(anyTransactionID: "c1", in: .production)
        #expect(zero.customer == 0)
        try await store.invalidate(anyTransactionID: "c1")
        let refused = try await store.setAnswer(
            AnswerWrite(
                answer,
                anyTransactionID: "c1",
                in: .production,
                timeToLive: .seconds(60),
                groupIDs: [],
                ifGeneration: zero
            )
        )
        #expect(!refused)
        #expect(try await store.answer(anyTransactionID: "c1", in: .production) == nil)
        let one = try await store.invalidationGeneration(anyTransactionID: "c1", in: .production)
        #expect(one == InvalidationGeneration(customer: 1, all: zero.all))
        try await store.invalidateAll()
        #expect(
            try await store.setAnswer(
                AnswerWrite(
                    answer,
                    anyTransactionID: "c1",
                    in: .production,
                    timeToLive: .seconds(60),
                    groupIDs: [],
                    ifGeneration: one
                )
            )
                == false
        )
        let two = try await store.invalidationGeneration(anyTransactionID: "c1", in: .production)
        #expect(two.customer == 1 && two.all != one.all)
        #expect(
            try await store.setAnswer(
                AnswerWrite(
                    answer,
                    anyTransactionID: "c1",
                    in: .production,
                    timeToLive: .seconds(60),
                    groupIDs: [],
                    ifGeneration: two
                )
            )
        )
        #expect(try await store.answer(anyTransactionID: "c1", in: .production) == answer)
        // Another customer's count is its own.
        let other = try await store.invalidationGeneration(anyTransactionID: "c2", in: .production)
        #expect(other == InvalidationGeneration(customer: 0, all: two.all))
    }

    // MARK: Invalidation by group

    static func members() -> StaticGroupsSource {
        StaticGroupsSource([
            "c1": GetCustomerGroupsResponse(groups: [Families.g1]),
            "c2": GetCustomerGroupsResponse(groups: [Families.g2, Families.g1]),
            "c3": GetCustomerGroupsResponse(groups: [Families.g2]),
        ])
    }

    static func clockedService(
        _ source: StaticGroupsSource,
        shared: (any SharedGroupsCache)?,
        clock: ManualClock
    ) throws -> GroupDecisionService {
        try ServiceHarness(source: source, sharedCache: shared, clock: clock, configuration: configuration).service
    }

    static func sources(
        _ service: GroupDecisionService,
        _ customers: [String] = ["c1", "c2", "c3"]
    ) async throws -> [String] {
        var sources: [String] = []
        for customer in customers {
            sources.append(try await service.decision(anyTransactionID: customer, environment: .sandbox).source.name)
        }
        return sources
    }

    @Test(
        "invalidate(groupID:) makes every member's next decision fetch again, on both services (real redis-server)",
        .requires(.redisServer)
    )
    func groupInvalidationAcrossServicesRedis() async throws {
        let fleet = try await RedisFleet.start()
        defer { fleet.stop() }
        // The stores' clock is the services': a fetch time is never in the stores' future.
        let clock = ManualClock(Date(timeIntervalSince1970: 1_700_000_000))
        let (first, second) = try fleet.pair(prefix: "fleet", now: clock.now)
        let source = Self.members()
        let service1 = try Self.clockedService(source, shared: first, clock: clock)
        let service2 = try Self.clockedService(source, shared: second, clock: clock)
        #expect(try await Self.sources(service1) == ["live", "live", "live"])
        #expect(try await Self.sources(service2) == ["cache", "cache", "cache"])
        try await service2.invalidate(groupID: "g1")
        // Service 2 forgot c1 and c2 at once; c3 (not in g1) stays.
        #expect(try await Self.sources(service2) == ["live", "live", "cache"])
        // Service 1 reads Redis again once its own copies pass the local time to live, and finds the
        // members' new answers there.
        clock.advance(by: service1.configuration.localCache.timeToLive)
        #expect(try await Self.sources(service1) == ["cache", "cache", "cache"])
        #expect(source.callCount(for: "c1") == 2)
        #expect(source.callCount(for: "c2") == 2)
        #expect(source.callCount(for: "c3") == 1)
        // Invalidating again after the index was used finds the members written since.
        try await service1.invalidate(groupID: "g1")
        #expect(try await Self.sources(service1, ["c1", "c2"]) == ["live", "live"])
        #expect(source.callCount == 7)
    }

    @Test(
        "a group invalidated through one server wins over a member's fetch in flight on another (real redis-server)",
        .requires(.redisServer)
    )
    func groupInvalidationWinsOverFetchInFlightRedis() async throws {
        let fleet = try await RedisFleet.start()
        defer { fleet.stop() }
        let (first, second) = try fleet.pair(prefix: "fleet")
        let result = try await Self.fetchOverrunByInvalidation(first, second) { try await $0.invalidate(groupID: "g1") }
        #expect(result.inFlight == Families.capabilities)
        #expect(result.afterOnFirst == [])
        #expect(result.afterOnSecond == [])
        #expect(result.calls == 2)
    }

    /// A member (c2, in g1 and g2) and a non-member (c3, in g2) are fetched by service 1 while it
    /// invalidates g1; then both are asked of service 2: the sources it answers with, and Apple's
    /// calls in all.
    static func groupInvalidationDuringFetches(
        _ first: any SharedGroupsCache,
        _ second: any SharedGroupsCache
    ) async throws -> (sources: [String], calls: Int) {
        let apple = members()
        let gated = GatedGroupsSource(apple)
        let service1 = try service(gated, shared: first)
        let service2 = try service(gated, shared: second)
        gated.close()
        let member = Task { try await service1.decision(anyTransactionID: "c2", environment: .sandbox) }
        let other = Task { try await service1.decision(anyTransactionID: "c3", environment: .sandbox) }
        try await gated.waitForCalls(2)
        try await service1.invalidate(groupID: "g1")
        gated.open()
        #expect(try await member.value.source.name == "live")
        #expect(try await other.value.source.name == "live")
        return (try await sources(service2, ["c2", "c3"]), apple.callCount)
    }

    @Test(
        "a group's invalidation keeps the answers of fetches under way that do not hold the group (real redis-server)",
        .requires(.redisServer)
    )
    func groupInvalidationKeepsOtherFetchesRedis() async throws {
        let fleet = try await RedisFleet.start()
        defer { fleet.stop() }
        let (first, second) = try fleet.pair(prefix: "fleet")
        // Before, the non-member's answer was kept nowhere either, and its next decision on another
        // server was a first fetch (["live", "live"], 4 calls): one the budget may refuse.
        let result = try await Self.groupInvalidationDuringFetches(first, second)
        #expect(result.sources == ["live", "cache"])
        #expect(result.calls == 3)
    }

    @Test("a group's invalidation keeps the answers of fetches under way that do not hold the group (in memory)")
    func groupInvalidationKeepsOtherFetchesInMemory() async throws {
        let shared = InMemoryGroupsCache()
        let result = try await Self.groupInvalidationDuringFetches(shared, shared)
        #expect(result.sources == ["live", "cache"])
        #expect(result.calls == 3)
    }

    @Test("invalidate(groupID:) without a shared cache forgets the members here; any id is taken, the empty one too")
    func groupInvalidationInProcess() async throws {
        let clock = ManualClock()
        let source = Self.members()
        let service = try Self.clockedService(source, shared: nil, clock: clock)
        #expect(try await Self.sources(service) == ["live", "live", "live"])
        try await service.invalidate(groupID: "g2")
        #expect(try await Self.sources(service) == ["cache", "live", "live"])
        // Apple's answers may hold any string as a group id, so any is invalidated: none holds "".
        try await service.invalidate(groupID: "")
        #expect(try await Self.sources(service) == ["cache", "cache", "cache"])
    }

    // MARK: Group ids outside A-Z a-z 0-9 _ -

    /// Group ids Apple's answers may hold (the decoding of Get Customer Groups takes any string):
    /// the empty one, a space, `:` and `*` (which a key pattern would read), `/`, `%`, a dot,
    /// letters outside ASCII, a control character, and one longer than a transaction id may be.
    static let unusualGroupIDs = [
        "", "9 ", "team:42", "x:Sandbox:groups:c1", "*", "a/b%2Fc", "org.example.team", "équipe-ü", "tab\there",
        String(repeating: "7", count: 300),
    ]

    /// Customer c holds the group (decoded from Apple's bytes), customer d another: invalidating the
    /// group through one service makes c fetch again on both, d on neither.
    static func unusualGroupInvalidated(
        _ groupID: String,
        shared: (any SharedGroupsCache)?,
        second: (any SharedGroupsCache)?
    ) async throws -> (sources: [String], calls: Int) {
        let body = GetCustomerGroupsResponse(groups: [GroupEntry(groupID: groupID, groupType: .organization)])
            .jsonBytes()
        let decoded = try GetCustomerGroupsResponse(jsonBytes: body)
        #expect(decoded.groups.map(\.groupID) == [groupID])
        let source = StaticGroupsSource(["c": decoded, "d": GetCustomerGroupsResponse(groups: [Families.g2])])
        let first = try Self.service(source, shared: shared ?? InMemoryGroupsCache())
        let other = try Self.service(source, shared: second ?? shared ?? InMemoryGroupsCache())
        var sources = try await Self.sources(first, ["c", "d"]) + Self.sources(other, ["c", "d"])
        try await first.invalidate(groupID: groupID)
        sources += try await Self.sources(other, ["c", "d"]) + Self.sources(first, ["c", "d"])
        return (sources, source.callCount)
    }

    @Test(
        "a group id outside A-Z a-z 0-9 _ - that Apple may send is invalidated through the service (in memory)",
        arguments: unusualGroupIDs
    )
    func unusualGroupIDInMemory(_ groupID: String) async throws {
        let shared = InMemoryGroupsCache()
        let result = try await Self.unusualGroupInvalidated(groupID, shared: shared, second: nil)
        #expect(result.sources == ["live", "live", "cache", "cache", "live", "cache", "cache", "cache"])
        #expect(result.calls == 3)
    }

    @Test(
        "a group id outside A-Z a-z 0-9 _ - that Apple may send is indexed and invalidated across two stores (real redis-server)",
        .requires(.redisServer),
        arguments: unusualGroupIDs
    )
    func unusualGroupIDRedis(_ groupID: String) async throws {
        let fleet = try await RedisFleet.start()
        defer { fleet.stop() }
        let (storeA, storeB) = try fleet.pair(prefix: "odd")
        let result = try await Self.unusualGroupInvalidated(groupID, shared: storeA, second: storeB)
        #expect(result.sources == ["live", "live", "cache", "cache", "live", "cache", "cache", "cache"])
        #expect(result.calls == 3)
        // Its keys stay within the group's own: no key of another prefix or kind is named by it.
        let keys = try await storeA.call([Array("KEYS".utf8), Array("*".utf8)], "KEYS")
        guard case .array(let names?) = keys else {
            Issue.record("KEYS answered \(keys)")
            return
        }
        let texts = names.compactMap { reply -> String? in
            if case .bulk(let name?) = reply { return String(decoding: name, as: UTF8.self) }
            return nil
        }
        #expect(texts.allSatisfy { $0.hasPrefix("odd:") })
        let encoded = RedisGroupsCache.groupKeyPart(groupID)
        #expect(texts.contains("odd:group-generation:\(encoded)"))
        #expect(!encoded.contains(":"))
    }

    @Test("an in-memory shared cache forgets a group's members and refuses an earlier write holding it")
    func groupInvalidationInMemory() async throws {
        let shared = InMemoryGroupsCache()
        let answer = CachedGroupsAnswer(
            kind: .groups,
            body: Array(#"{"groups":[{"groupId":"g1","groupType":"CONSUMER"}]}"#.utf8),
            fetchedAt: Date(timeIntervalSince1970: 1_700_000_000)
        )
        let before = try await shared.invalidationGeneration(anyTransactionID: "c1", in: .sandbox)
        try await shared.setAnswer(answer, anyTransactionID: "c9", in: .sandbox, timeToLive: .seconds(60))
        try await shared.invalidate(groupID: "g1")
        #expect(try await shared.answer(anyTransactionID: "c9", in: .sandbox) == nil)
        let refused = try await shared.setAnswer(
            AnswerWrite(
                answer,
                anyTransactionID: "c1",
                in: .sandbox,
                timeToLive: .seconds(60),
                groupIDs: ["g1"],
                ifGeneration: before
            )
        )
        #expect(!refused)
        // Another group's answer fetched at the same generation is kept.
        let kept = try await shared.setAnswer(
            AnswerWrite(
                answer,
                anyTransactionID: "c2",
                in: .sandbox,
                timeToLive: .seconds(60),
                groupIDs: ["g2"],
                ifGeneration: before
            )
        )
        #expect(kept)
    }

    @Test(
        "a group listing more customers than the bound turns its invalidation into one of everyone (real redis-server)",
        .requires(.redisServer)
    )
    func groupIndexBound() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store(prefix: "bound", timeout: .seconds(60))
        defer { store.close() }
        let answer = CachedGroupsAnswer(
            kind: .groups,
            body: Array(#"{"groups":[]}"#.utf8),
            fetchedAt: Date(timeIntervalSince1970: 1_700_000_000)
        )
        let generation = try await store.invalidationGeneration(anyTransactionID: "x", in: .sandbox)
        let limit = RedisGroupsCache.maximumMembersPerGroup
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<16 {
                group.addTask {
                    for index in stride(from: lane, through: limit, by: 16) {
                        let kept = try await store.setAnswer(
                            AnswerWrite(
                                answer,
                                anyTransactionID: "m\(index)",
                                in: .sandbox,
                                timeToLive: .seconds(600),
                                groupIDs: ["big"],
                                ifGeneration: generation
                            )
                        )
                        #expect(kept)
                    }
                }
            }
            try await group.waitForAll()
        }
        try await store.setAnswer(answer, anyTransactionID: "outsider", in: .sandbox, timeToLive: .seconds(600))
        let listed = try await store.call([Array("ZCARD".utf8), Array("bound:Sandbox:members:big".utf8)], "ZCARD")
        #expect(listed == .integer(Int64(limit)))
        try await store.invalidate(groupID: "big")
        // The customer beyond the bound was not listed, so everyone went, the outsider too.
        #expect(try await store.answer(anyTransactionID: "m\(limit)", in: .sandbox) == nil)
        #expect(try await store.answer(anyTransactionID: "m0", in: .sandbox) == nil)
        #expect(try await store.answer(anyTransactionID: "outsider", in: .sandbox) == nil)
    }

    // MARK: Flights begun before an invalidation

    @Test(
        "a decision begun after another process's invalidation returned joins a flight begun before it (in memory)",
        .timeLimit(.minutes(5))
    )
    func joinsFlightBegunBeforeInvalidation() async throws {
        let shared = InMemoryGroupsCache()
        let apple = StaticGroupsSource(["c": Families.member])
        let gated = GatedGroupsSource(apple)
        let serviceA = try FleetInvalidationTests.service(apple, shared: shared)
        let serviceB = try FleetInvalidationTests.service(gated, shared: shared)
        gated.close()
        let first = Task { try await serviceB.decision(anyTransactionID: "c", environment: .sandbox) }
        try await gated.waitForCalls(1)
        apple.setAnswer(Families.noGroups, for: "c")
        try await serviceA.invalidate(anyTransactionID: "c")
        // Begun after the invalidation returned.
        let second = Task { try await serviceB.decision(anyTransactionID: "c", environment: .sandbox) }
        // Time for the second decision to reach the flight (if it started its own, the gate holds it).
        try await Task.sleep(for: .milliseconds(300))
        gated.open()
        _ = try await first.value
        let served = try await second.value
        #expect(served.decision.capabilities.sorted() == [])
    }

    /// Without a shared cache: a fetch under way for c (whose answer holds g2 only) is overtaken by
    /// a group invalidation it does not concern, then by `second`; then c is decided again.
    static func secondInvalidationDuringFetch(
        _ second: @Sendable (GroupDecisionService) async throws -> Void
    ) async throws -> (inFlight: [String], after: ServedDecision, calls: Int) {
        let apple = StaticGroupsSource(["c": Families.memberOfG2])
        let gated = GatedGroupsSource(apple)
        let service = try ServiceHarness(
            source: gated,
            time: .system,
            configuration: FleetInvalidationTests.configuration
        )
        .service
        gated.close()
        let inFlight = Task { try await service.decision(anyTransactionID: "c", environment: .sandbox) }
        try await gated.waitForCalls(1)
        try await service.invalidate(groupID: "g1")
        apple.setAnswer(Families.noGroups, for: "c")
        try await second(service)
        gated.open()
        let held = try await inFlight.value.decision.capabilities.sorted()
        let after = try await service.decision(anyTransactionID: "c", environment: .sandbox)
        return (held, after, apple.callCount)
    }

    @Test(
        "a fetch overtaken by a group's invalidation it does not concern, then by the customer's, all or its group's",
        arguments: ["customer", "all", "g2"]
    )
    func secondInvalidationReachesDetachedFlight(_ which: String) async throws {
        let result = try await Self.secondInvalidationDuringFetch { service in
            switch which {
            case "customer": try await service.invalidate(anyTransactionID: "c")
            case "all": try await service.invalidateAll()
            default: try await service.invalidate(groupID: which)
            }
        }
        #expect(result.inFlight == Families.capabilities)
        #expect(result.after.source == .live)
        #expect(result.after.decision.capabilities.sorted() == [])
        #expect(result.calls == 2)
    }
}
