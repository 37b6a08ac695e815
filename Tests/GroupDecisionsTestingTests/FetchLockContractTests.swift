import AppStoreGroups
import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import GroupDecisions

@Suite("Shared caches: the fetch lock taken with the answer and generation, and released by the write")
struct FetchLockContractTests {
    @Test("a store with only the single calls: the defaults behave the same, from the same single calls as before")
    func defaults() async throws {
        let store = ScriptedGroupsCache()
        try await SharedGroupsCacheConformance(readsWhenFetchLockTaken: false) { store }.run(.conditionalWrites)
        store.clearCalls()
        _ = try await SharedGroupsCacheConformance.acquire(store, "p1")
        #expect(store.calls == ["acquireFetchLock"])
        try await store.releaseFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "o6")
        store.clearCalls()
        let attempt = try await SharedGroupsCacheConformance.acquire(store, "p1")
        #expect(attempt.acquired)
        #expect(store.calls == ["acquireFetchLock", "answer", "invalidationGeneration"])
        store.clearCalls()
        let generation = try #require(attempt.generation)
        #expect(
            try await SharedGroupsCacheConformance.write(
                store,
                SharedGroupsCacheConformance.answer("g4"),
                groups: [],
                at: generation,
                releasing: "p1"
            )
        )
        #expect(store.calls == ["setAnswerIfGeneration", "releaseFetchLock"])
    }

    @Test("the defaults release the lock when the write fails, and when a read after taking it fails")
    func defaultsReleaseOnFailure() async throws {
        let store = ScriptedGroupsCache()
        let attempt = try await SharedGroupsCacheConformance.acquire(store, "o1")
        let generation = try #require(attempt.generation)
        store.fail(["setAnswerIfGeneration"])
        store.clearCalls()
        let error = await expectError {
            try await SharedGroupsCacheConformance.write(
                store,
                SharedGroupsCacheConformance.answer("g1"),
                groups: [],
                at: generation,
                releasing: "o1"
            )
        }
        #expect(error?.message == "setAnswerIfGeneration failed")
        #expect(store.calls == ["setAnswerIfGeneration", "releaseFetchLock"])
        store.fail(["invalidationGeneration"])
        let readError = await expectError { try await SharedGroupsCacheConformance.acquire(store, "o2") }
        #expect(readError?.message == "invalidationGeneration failed")
        store.fail([])
        // Both locks went: the next caller takes it.
        #expect(try await SharedGroupsCacheConformance.acquire(store, "o3").acquired)
    }
}
