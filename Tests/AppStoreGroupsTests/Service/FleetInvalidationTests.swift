import Foundation
import GroupPolicy
import Testing

@testable import AppStoreGroups

/// Invalidation across the processes of a fleet: an invalidation made through one process wins over
/// a fetch another process began before it.
@Suite("Decision service: invalidation across a fleet")
struct FleetInvalidationTests {
    static let family = GetCustomerGroupsResponse(groups: [GroupEntry(groupID: "g1", groupType: .consumer)])
    static let none = GetCustomerGroupsResponse(groups: [])

    static func service(_ source: some GroupsSource, shared: any SharedGroupsCache) throws -> GroupDecisionService {
        try GroupDecisionService(
            policies: GroupDecisionServiceTests.policies(),
            source: source,
            sharedCache: shared,
            configuration: GroupDecisionService.Configuration()
        )
    }

    /// Service 1 fetches while Apple still lists the group; the customer leaves it and service 2
    /// invalidates; then service 1's answer arrives.
    static func fetchOverrunByInvalidation(
        _ first: any SharedGroupsCache,
        _ second: any SharedGroupsCache
    ) async throws -> (inFlight: [String], afterOnFirst: [String], afterOnSecond: [String], calls: Int) {
        let apple = StaticGroupsSource(["c1": family])
        let gated = GatedGroupsSource(apple)
        let service1 = try service(gated, shared: first)
        let service2 = try service(gated, shared: second)
        gated.close()
        let inFlight = Task { try await service1.decision(anyTransactionID: "c1", environment: .sandbox) }
        try await gated.waitForCalls(1)
        // Apple removes the customer from the group; the notification reaches service 2.
        apple.setAnswer(none, for: "c1")
        try await service2.invalidate(anyTransactionID: "c1")
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
        let server = try await RedisServer.start()
        defer { server.stop() }
        let first = try server.store(prefix: "fleet")
        let second = try server.store(prefix: "fleet")
        defer {
            first.close()
            second.close()
        }
        let result = try await Self.fetchOverrunByInvalidation(first, second)
        // The call in flight answers with what Apple said when it asked (it began before the
        // invalidation); nothing after the invalidation is served from it, on either server.
        #expect(result.inFlight == GroupDecisionServiceTests.familyCapabilities)
        #expect(result.afterOnFirst == [])
        #expect(result.afterOnSecond == [])
        #expect(result.calls == 2)
        #expect(try await second.answer(anyTransactionID: "c1", in: .sandbox)?.body == Array(#"{"groups":[]}"#.utf8))
    }

    @Test("an invalidation through one service wins over another's fetch in flight (in-memory shared cache)")
    func invalidationWinsOverFetchInFlightInMemory() async throws {
        let shared = InMemoryGroupsCache()
        let result = try await Self.fetchOverrunByInvalidation(shared, shared)
        #expect(result.inFlight == GroupDecisionServiceTests.familyCapabilities)
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
        #expect(zero == InvalidationGeneration(customer: 0, all: 0))
        try await store.invalidate(anyTransactionID: "c1")
        let refused = try await store.setAnswer(
            answer,
            anyTransactionID: "c1",
            in: .production,
            timeToLive: .seconds(60),
            ifGeneration: zero
        )
        #expect(!refused)
        #expect(try await store.answer(anyTransactionID: "c1", in: .production) == nil)
        let one = try await store.invalidationGeneration(anyTransactionID: "c1", in: .production)
        #expect(one == InvalidationGeneration(customer: 1, all: 0))
        try await store.invalidateAll()
        #expect(
            try await store.setAnswer(
                answer,
                anyTransactionID: "c1",
                in: .production,
                timeToLive: .seconds(60),
                ifGeneration: one
            )
                == false
        )
        let two = try await store.invalidationGeneration(anyTransactionID: "c1", in: .production)
        #expect(two == InvalidationGeneration(customer: 1, all: 1))
        #expect(
            try await store.setAnswer(
                answer,
                anyTransactionID: "c1",
                in: .production,
                timeToLive: .seconds(60),
                ifGeneration: two
            )
        )
        #expect(try await store.answer(anyTransactionID: "c1", in: .production) == answer)
        // Another customer's count is its own.
        let other = try await store.invalidationGeneration(anyTransactionID: "c2", in: .production)
        #expect(other == InvalidationGeneration(customer: 0, all: 1))
    }
}
