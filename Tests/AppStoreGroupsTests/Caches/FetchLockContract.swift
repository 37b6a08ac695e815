import Foundation
import GroupDecisionsTesting
import GroupPolicy
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// What every shared cache's combined fetch-lock calls must do, whether implemented natively or by
/// the default implementations: run against Redis, the in-memory cache and a store that has only
/// the single calls.
enum FetchLockContract {
    /// Long enough that no lock expires while a busy machine runs the test (a 10-second lock once
    /// expired between two calls of a suite stalled for minutes).
    static let ttl = Duration.seconds(3_600)

    /// An answer fetched a second ago, in whole milliseconds (what a store keeps).
    static func answer(_ group: String) -> CachedGroupsAnswer {
        let now = (Date().timeIntervalSince1970 * 1000).rounded(.down) / 1000
        return CachedGroupsAnswer(
            kind: .groups,
            body: Array(#"{"groups":[{"groupId":"\#(group)","groupType":"CONSUMER"}]}"#.utf8),
            fetchedAt: Date(timeIntervalSince1970: now - 1)
        )
    }

    static func acquire(_ store: any SharedGroupsCache, _ owner: String) async throws -> FetchLockAttempt {
        try await store.acquireFetchLockAndRead(anyTransactionID: "c1", in: .sandbox, owner: owner, timeToLive: ttl)
    }

    static func write(
        _ store: any SharedGroupsCache,
        _ answer: CachedGroupsAnswer,
        groups: [String],
        at generation: InvalidationGeneration,
        releasing owner: String
    ) async throws -> Bool {
        try await store.setAnswer(
            AnswerWrite(
                answer,
                anyTransactionID: "c1",
                in: .sandbox,
                timeToLive: .seconds(60),
                groupIDs: groups,
                ifGeneration: generation
            ),
            releasingFetchLock: owner
        )
    }

    /// Lock taken, not taken, an answer stored meanwhile, generations that moved, a write refused
    /// after an invalidation that still releases the lock, a write that leaves another's lock.
    ///
    /// - Parameters:
    ///   - store: An empty store.
    ///   - readsWhenNotTaken: Whether the store reads the answer and generation when the lock is
    ///     held by another (a native implementation does; the default reads nothing then).
    /// - Throws: What the store throws.
    static func check(_ store: any SharedGroupsCache, readsWhenNotTaken: Bool) async throws {
        func generation(_ customer: UInt64, _ all: UInt64, _ groups: UInt64) -> InvalidationGeneration {
            InvalidationGeneration(customer: customer, all: all, groups: groups)
        }
        let first = answer("g1")
        #expect(
            try await acquire(store, "o1")
                == FetchLockAttempt(acquired: true, answer: nil, generation: generation(0, 0, 0))
        )
        // Another process: the lock is held, nothing is stored yet.
        #expect(
            try await acquire(store, "o2")
                == FetchLockAttempt(
                    acquired: false,
                    answer: nil,
                    generation: readsWhenNotTaken ? generation(0, 0, 0) : nil
                )
        )
        // The holder keeps its answer and releases the lock in one call.
        #expect(try await write(store, first, groups: ["g1"], at: generation(0, 0, 0), releasing: "o1"))
        #expect(try await store.answer(anyTransactionID: "c1", in: .sandbox) == first)
        // The lock is free again: the next process takes it and finds the answer stored meanwhile.
        #expect(
            try await acquire(store, "o2")
                == FetchLockAttempt(acquired: true, answer: first, generation: generation(0, 0, 0))
        )
        // An invalidation while it fetches: its write is refused, and the lock is released all the same.
        try await store.invalidate(anyTransactionID: "c1")
        #expect(try await write(store, answer("g2"), groups: ["g2"], at: generation(0, 0, 0), releasing: "o2") == false)
        #expect(try await store.answer(anyTransactionID: "c1", in: .sandbox) == nil)
        #expect(
            try await acquire(store, "o3")
                == FetchLockAttempt(acquired: true, answer: nil, generation: generation(1, 0, 0))
        )
        // Everyone invalidated, then a group: each moves its count.
        try await store.invalidateAll()
        try await store.releaseFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "o3")
        #expect(
            try await acquire(store, "o4")
                == FetchLockAttempt(acquired: true, answer: nil, generation: generation(1, 1, 0))
        )
        try await store.invalidate(groupID: "g1")
        try await store.releaseFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "o4")
        #expect(
            try await acquire(store, "o5")
                == FetchLockAttempt(acquired: true, answer: nil, generation: generation(1, 1, 1))
        )
        // An answer holding the group invalidated after its generation is refused.
        #expect(try await write(store, first, groups: ["g1"], at: generation(1, 1, 0), releasing: "o5") == false)
        #expect(
            try await acquire(store, "o6")
                == FetchLockAttempt(acquired: true, answer: nil, generation: generation(1, 1, 1))
        )
        // A writer whose lock expired keeps its answer (nothing was invalidated since) and leaves
        // the new holder's lock alone.
        let late = answer("g3")
        #expect(try await write(store, late, groups: ["g3"], at: generation(1, 1, 1), releasing: "o5"))
        #expect(
            try await acquire(store, "o7")
                == FetchLockAttempt(
                    acquired: false,
                    answer: readsWhenNotTaken ? late : nil,
                    generation: readsWhenNotTaken ? generation(1, 1, 1) : nil
                )
        )
        #expect(try await store.answer(anyTransactionID: "c1", in: .sandbox) == late)
        // Another customer and environment share none of it.
        #expect(
            try await store.acquireFetchLockAndRead(
                anyTransactionID: "c1",
                in: .production,
                owner: "o8",
                timeToLive: ttl
            )
                == FetchLockAttempt(acquired: true, answer: nil, generation: generation(1, 1, 1))
        )
    }
}

@Suite("Shared caches: the fetch lock taken with the answer and generation, and released by the write")
struct FetchLockContractTests {
    @Test("in memory: lock taken, not taken, answer present, generation moved, write refused still releasing")
    func inMemory() async throws {
        try await FetchLockContract.check(InMemoryGroupsCache(), readsWhenNotTaken: true)
    }

    @Test("in memory: the owner that holds the lock takes it again (a call sent twice answers the same)")
    func inMemoryReentrant() async throws {
        let store = InMemoryGroupsCache()
        #expect(try await FetchLockContract.acquire(store, "o1").acquired)
        #expect(try await FetchLockContract.acquire(store, "o1").acquired)
        #expect(try await FetchLockContract.acquire(store, "o2").acquired == false)
    }

    @Test("a store with only the single calls: the defaults behave the same, from the same single calls as before")
    func defaults() async throws {
        let store = ForwardingGroupsCache()
        try await FetchLockContract.check(store, readsWhenNotTaken: false)
        store.clearCalls()
        _ = try await FetchLockContract.acquire(store, "p1")
        #expect(store.calls == ["acquireFetchLock"])
        try await store.releaseFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "o6")
        store.clearCalls()
        let attempt = try await FetchLockContract.acquire(store, "p1")
        #expect(attempt.acquired)
        #expect(store.calls == ["acquireFetchLock", "answer", "invalidationGeneration"])
        store.clearCalls()
        let generation = try #require(attempt.generation)
        #expect(
            try await FetchLockContract.write(
                store,
                FetchLockContract.answer("g4"),
                groups: [],
                at: generation,
                releasing: "p1"
            )
        )
        #expect(store.calls == ["setAnswerIfGeneration", "releaseFetchLock"])
    }

    @Test("the defaults release the lock when the write fails, and when a read after taking it fails")
    func defaultsReleaseOnFailure() async throws {
        let store = ForwardingGroupsCache()
        let attempt = try await FetchLockContract.acquire(store, "o1")
        let generation = try #require(attempt.generation)
        store.fail(["setAnswerIfGeneration"])
        store.clearCalls()
        let error = await expectError {
            try await FetchLockContract.write(
                store,
                FetchLockContract.answer("g1"),
                groups: [],
                at: generation,
                releasing: "o1"
            )
        }
        #expect(error?.message == "setAnswerIfGeneration failed")
        #expect(store.calls == ["setAnswerIfGeneration", "releaseFetchLock"])
        store.fail(["invalidationGeneration"])
        let readError = await expectError { try await FetchLockContract.acquire(store, "o2") }
        #expect(readError?.message == "invalidationGeneration failed")
        store.fail([])
        // Both locks went: the next caller takes it.
        #expect(try await FetchLockContract.acquire(store, "o3").acquired)
    }
}
