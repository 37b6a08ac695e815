import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// Invalidation across the processes of a fleet: an invalidation made through one process wins over
/// a fetch another process began before it, and a group's reaches every member.
@Suite("Decision service: invalidation across a fleet")
struct FleetInvalidationTests {
    @Test(
        "an invalidation of the customer or its group through one process wins over another's fetch in flight",
        .requires(.redisServer),
        arguments: SharedStore.allCases,
        [Invalidation.customer, .group]
    )
    func invalidationWinsOverFetchInFlight(_ store: SharedStore, _ invalidation: Invalidation) async throws {
        let (first, second, server) = try await store.pair()
        defer { server?.stop() }
        let apple = StaticGroupsSource(["c": Families.member])
        let gated = GatedGroupsSource(apple)
        let service1 = try fleetService(gated, first)
        let service2 = try fleetService(gated, second)
        gated.close()
        let inFlight = Task { try await service1.decide("c") }
        try await gated.waitForCalls(1)
        // Apple removes the customer from the group; the notification reaches service 2.
        apple.setAnswer(Families.noGroups, for: "c")
        try await invalidation.run(on: service2)
        gated.open()
        // The call in flight answers with what Apple said when it asked (it began before the
        // invalidation); nothing after the invalidation is served from it, on either process.
        #expect(try await inFlight.value.decision.capabilities.sorted() == Families.capabilities)
        #expect(try await service1.decide("c").decision.capabilities.sorted() == [])
        #expect(try await service2.decide("c").decision.capabilities.sorted() == [])
        #expect(apple.callCount == 2)
        #expect(try await second.answer(anyTransactionID: "c", in: .sandbox)?.body == Array(#"{"groups":[]}"#.utf8))
    }

    // MARK: Invalidation by group

    static func members() -> StaticGroupsSource {
        StaticGroupsSource([
            "c1": GetCustomerGroupsResponse(groups: [Families.g1]),
            "c2": GetCustomerGroupsResponse(groups: [Families.g2, Families.g1]),
            "c3": GetCustomerGroupsResponse(groups: [Families.g2]),
        ])
    }

    @Test(
        "a group's invalidation keeps the answers of fetches under way that do not hold the group",
        .requires(.redisServer),
        arguments: SharedStore.allCases
    )
    func groupInvalidationKeepsOtherFetches(_ store: SharedStore) async throws {
        let (first, second, server) = try await store.pair()
        defer { server?.stop() }
        // A member (c2, in g1 and g2) and a non-member (c3, in g2) are fetched by service 1 while it
        // invalidates g1; then both are asked of service 2.
        let apple = Self.members()
        let gated = GatedGroupsSource(apple)
        let service1 = try fleetService(gated, first)
        let service2 = try fleetService(gated, second)
        gated.close()
        let member = Task { try await service1.decide("c2") }
        let other = Task { try await service1.decide("c3") }
        try await gated.waitForCalls(2)
        try await service1.invalidate(groupID: "g1")
        gated.open()
        #expect(try await member.value.source == .live)
        #expect(try await other.value.source == .live)
        // Before, the non-member's answer was kept nowhere either, and its next decision on another
        // process was a first fetch (["live", "live"], 4 calls): one the budget may refuse.
        #expect(try await sources(service2, ["c2", "c3"]) == ["live", "cache"])
        #expect(apple.callCount == 3)
    }

    @Test("invalidate(groupID:) without a shared cache forgets the members here; any id is taken, the empty one too")
    func groupInvalidationInProcess() async throws {
        let service = try fleetService(Self.members(), nil, clock: ManualClock())
        #expect(try await sources(service) == ["live", "live", "live"])
        try await service.invalidate(groupID: "g2")
        #expect(try await sources(service) == ["cache", "live", "live"])
        // Apple's answers may hold any string as a group id, so any is invalidated: none holds "".
        try await service.invalidate(groupID: "")
        #expect(try await sources(service) == ["cache", "cache", "cache"])
    }

    /// Group ids Apple's answers may hold (the decoding of Get Customer Groups takes any string):
    /// the empty one, a space, `:` and `*` (which a key pattern would read), `/`, `%`, a dot,
    /// letters outside ASCII, a control character, and one longer than a transaction id may be.
    static let unusualGroupIDs = [
        "", "9 ", "team:42", "x:Sandbox:groups:c1", "*", "a/b%2Fc", "org.example.team", "équipe-ü", "tab\there",
        String(repeating: "7", count: 300),
    ]

    @Test(
        "a group id outside A-Z a-z 0-9 _ - that Apple may send is indexed and invalidated across two processes",
        .requires(.redisServer),
        arguments: SharedStore.allCases,
        unusualGroupIDs
    )
    func unusualGroupID(_ store: SharedStore, _ groupID: String) async throws {
        let (storeA, storeB, server) = try await store.pair(prefix: "odd")
        defer { server?.stop() }
        // Customer c holds the group (decoded from Apple's bytes), customer d another: invalidating
        // the group through one service makes c fetch again on both, d on neither.
        let body = GetCustomerGroupsResponse(groups: [GroupEntry(groupID: groupID, groupType: .organization)])
            .jsonBytes()
        let decoded = try GetCustomerGroupsResponse(jsonBytes: body)
        #expect(decoded.groups.map(\.groupID) == [groupID])
        let source = StaticGroupsSource(["c": decoded, "d": GetCustomerGroupsResponse(groups: [Families.g2])])
        let first = try fleetService(source, storeA)
        let other = try fleetService(source, storeB)
        var served = try await sources(first, ["c", "d"]) + sources(other, ["c", "d"])
        try await first.invalidate(groupID: groupID)
        served += try await sources(other, ["c", "d"]) + sources(first, ["c", "d"])
        #expect(served == ["live", "live", "cache", "cache", "live", "cache", "cache", "cache"])
        #expect(source.callCount == 3)
        // Invalidating again, after the index was used, finds the member's answer written since.
        try await other.invalidate(groupID: groupID)
        #expect(try await sources(other, ["c"]) + sources(first, ["c"]) == ["live", "cache"])
        #expect(source.callCount == 4)
        guard let redis = storeA as? RedisGroupsCache else { return }
        // Its keys stay within the group's own: no key of another prefix or kind is named by it.
        guard case .array(let names?) = try await redis.send(["KEYS", "*"]) else {
            Issue.record("KEYS answered no array")
            return
        }
        let texts = names.map { String(decoding: $0.bulkValue, as: UTF8.self) }
        #expect(texts.allSatisfy { $0.hasPrefix("odd:") })
        let encoded = RedisGroupsCache.groupKeyPart(groupID)
        #expect(texts.contains("odd:group-generation:\(encoded)"))
        #expect(!encoded.contains(":"))
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
        let serviceA = try fleetService(apple, shared)
        let serviceB = try fleetService(gated, shared)
        gated.close()
        let first = Task { try await serviceB.decide("c") }
        try await gated.waitForCalls(1)
        apple.setAnswer(Families.noGroups, for: "c")
        try await serviceA.invalidate(anyTransactionID: "c")
        // Begun after the invalidation returned.
        let second = Task { try await serviceB.decide("c") }
        // Time for the second decision to reach the flight (if it started its own, the gate holds it).
        try await Task.sleep(for: .milliseconds(300))
        gated.open()
        _ = try await first.value
        #expect(try await second.value.decision.capabilities.sorted() == [])
    }

    @Test(
        "a fetch overtaken by a group's invalidation it does not concern, then by the customer's, all or its group's",
        arguments: [Invalidation.customer, .all, .group]
    )
    func secondInvalidationReachesDetachedFlight(_ second: Invalidation) async throws {
        // Without a shared cache: a fetch under way for c (whose answer holds g2 only) is overtaken
        // by a group invalidation it does not concern, then by `second`; then c is decided again.
        let apple = StaticGroupsSource(["c": Families.memberOfG2])
        let gated = GatedGroupsSource(apple)
        let service = try fleetService(gated, nil)
        gated.close()
        let inFlight = Task { try await service.decide("c") }
        try await gated.waitForCalls(1)
        try await service.invalidate(groupID: "g1")
        apple.setAnswer(Families.noGroups, for: "c")
        if second == .group {
            try await service.invalidate(groupID: "g2")
        } else {
            try await second.run(on: service)
        }
        gated.open()
        #expect(try await inFlight.value.decision.capabilities.sorted() == Families.capabilities)
        #expect(try await service.decide("c").outcome == ("live", []))
        #expect(apple.callCount == 2)
    }
}
