import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// An invalidation that arrives while a fetch for the customer is on its way: the answer that
/// fetch brings back is older than the invalidation and must not be served after it.
@Suite("Decision service: invalidation during a fetch")
struct InvalidationRaceTests {
    static let noGroups = StubGroupsSource.Answer.groups(Array(#"{"groups":[]}"#.utf8))

    @Test("a revocation processed during a fetch: later calls fetch again instead of reusing that fetch")
    func invalidationDuringFetch() async throws {
        // Apple answers with the request's state after 400 ms: the first request predates the
        // revocation, so it carries the family group.
        let stub = StubGroupsSource(delay: .milliseconds(400))
        let service = try GroupDecisionServiceTests.service(stub)
        let before = Task { try await service.decision(anyTransactionID: "c1", environment: .sandbox) }
        while stub.requests.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        // The revocation: Apple's state changes, and the notification handler invalidates.
        stub.answer { _, _ in Self.noGroups }
        try await service.invalidate(anyTransactionID: "c1")
        // A call made after the invalidation, while the old fetch is still on its way.
        let after = try await service.decision(anyTransactionID: "c1", environment: .sandbox)
        #expect(after.source == .live)
        #expect(after.decision.capabilities.isEmpty)
        // The old fetch answers its own callers, and is not kept.
        #expect(try await before.value.decision.capabilities.sorted() == Families.capabilities)
        let later = try await service.decision(anyTransactionID: "c1", environment: .sandbox)
        #expect(later.decision.capabilities.isEmpty)
        #expect(stub.requests == ["c1", "c1"])
    }

    @Test("an answer fetched before invalidateAll is not kept after it")
    func invalidateAllDuringFetch() async throws {
        let stub = StubGroupsSource(delay: .milliseconds(400))
        let shared = InMemoryGroupsCache()
        let service = try GroupDecisionServiceTests.service(stub, shared: shared)
        let before = Task { try await service.decision(anyTransactionID: "c1", environment: .sandbox) }
        while stub.requests.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        stub.answer { _, _ in Self.noGroups }
        try await service.invalidateAll()
        _ = try await before.value
        #expect(try await shared.answer(anyTransactionID: "c1", in: .sandbox) == nil)
        let after = try await service.decision(anyTransactionID: "c1", environment: .sandbox)
        #expect(after.source == .live)
        #expect(after.decision.capabilities.isEmpty)
        #expect(stub.requests == ["c1", "c1"])
    }
}
