import Foundation
import GroupDecisionsTesting
import GroupPolicy
import GroupPolicyTestSupport
import ServingTestSupport
import Testing

@testable import GroupDecisions

/// The in-process store beyond the conformance suite's contract (which invalidations remove which answers, for one):
/// the byte bound with least-recently-used eviction, its own single-call fetch lock, and what an invalidation frees.
@Suite("In-memory groups store")
struct InMemoryGroupsCacheTests {
    static func answer(_ body: String, at date: Date) -> CachedGroupsAnswer {
        CachedGroupsAnswer(kind: .groups, body: Array(body.utf8), fetchedAt: date)
    }

    /// One array of bytes for every answer, and what each costs: an array's capacity is what the allocator gave it,
    /// which for the same request can differ by a block between allocations, and the cost counts capacity.
    static func sameSizeAnswers(_ clock: ManualClock) -> (answer: @Sendable () -> CachedGroupsAnswer, cost: Int) {
        let body = Array(String(repeating: "x", count: 100).utf8)
        let answer = { @Sendable in CachedGroupsAnswer(kind: .groups, body: body, fetchedAt: clock.date) }
        return (answer, MemoryFootprint.cost(of: LocalGroupsCache.Entry(answer: answer()), customerID: "c0"))
    }

    @Test(
        "an answer costs its bookkeeping and its body's block; one larger than the capacity is not kept, a large one evicts the least recently used first, and an invalidation of everything frees every byte"
    )
    func byteBound() async throws {
        let clock = ManualClock()
        let (answer, cost) = Self.sameSizeAnswers(clock)
        // The bookkeeping, then the body's array: a 32-byte header and its capacity in a block
        // (144 bytes for a capacity of 100; a run that reused a larger free block gave 160).
        let capacity = answer().body.capacity
        #expect((100..<148).contains(capacity))
        #expect(cost == 1_024 + MemoryFootprint.block(32 + capacity))
        let store = InMemoryGroupsCache(capacityBytes: 3 * cost, now: clock.now)
        for id in ["c0", "c1", "c2"] {
            try await store.setAnswer(answer(), anyTransactionID: id, in: .sandbox, timeToLive: .seconds(60))
        }
        #expect(store.costBytes == 3 * cost)
        // Larger than the whole capacity: not kept, and nothing evicted for it.
        let huge = Self.answer(String(repeating: "z", count: 3 * cost), at: clock.date)
        try await store.setAnswer(huge, anyTransactionID: "huge", in: .sandbox, timeToLive: .seconds(60))
        #expect(try await store.answer(anyTransactionID: "huge", in: .sandbox) == nil)
        #expect(store.costBytes == 3 * cost)
        // Reading c0 makes c1 the least recently used; an answer twice the size evicts the two least recently used.
        #expect(try await store.answer(anyTransactionID: "c0", in: .sandbox) != nil)
        let big = Self.answer(String(repeating: "y", count: 100 + cost / 2), at: clock.date)
        try await store.setAnswer(big, anyTransactionID: "c3", in: .sandbox, timeToLive: .seconds(60))
        #expect(try await store.answer(anyTransactionID: "c1", in: .sandbox) == nil)
        #expect(try await store.answer(anyTransactionID: "c2", in: .sandbox) == nil)
        #expect(try await store.answer(anyTransactionID: "c0", in: .sandbox) != nil)
        #expect(try await store.answer(anyTransactionID: "c3", in: .sandbox) != nil)
        #expect(store.count == 2)
        #expect(store.costBytes <= 3 * cost)
        try await store.invalidateAll()
        #expect(store.count == 0)
        #expect(store.costBytes == 0)
    }

    @Test("20,000 seeded operations keep the recency list, the byte count and expiry equal to a plain model", .cpuBound)
    func matchesModel() async throws {
        let clock = ManualClock()
        let (answer, cost) = Self.sameSizeAnswers(clock)
        let store = InMemoryGroupsCache(capacityBytes: 5 * cost, now: clock.now)
        // The model: customers from least to most recently used, with when each expires.
        var model: [(id: String, expires: Date)] = []
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        /// Reads a customer from the model as the store does: expired is removed, alive becomes newest.
        func modelRead(_ id: String) -> Bool {
            guard let index = model.firstIndex(where: { $0.id == id }) else { return false }
            let entry = model.remove(at: index)
            guard clock.date < entry.expires else { return false }
            model.append(entry)
            return true
        }
        for step in 0..<20_000 {
            let id = "c\(next(9))"
            switch next(10) {
            case 0...3:
                let timeToLive = 10 + next(30)
                try await store.setAnswer(
                    answer(),
                    anyTransactionID: id,
                    in: .sandbox,
                    timeToLive: .seconds(timeToLive)
                )
                model.removeAll { $0.id == id }
                if model.count == 5 { model.removeFirst() }
                model.append((id, clock.date.addingTimeInterval(Double(timeToLive))))
            case 4...7:
                let found = try await store.answer(anyTransactionID: id, in: .sandbox) != nil
                #expect(found == modelRead(id), "step \(step): read \(id)")
            case 8:
                try await store.invalidate(anyTransactionID: id)
                model.removeAll { $0.id == id }
            default:
                clock.advance(by: .seconds(next(5)))
            }
            #expect(store.count == model.count, "step \(step)")
            #expect(store.costBytes == model.count * cost, "step \(step)")
            if step % 1_000 == 999 {
                for id in (0..<9).map({ "c\($0)" }) {
                    let found = try await store.answer(anyTransactionID: id, in: .sandbox) != nil
                    #expect(found == modelRead(id), "step \(step): read \(id)")
                }
            }
        }
    }

    /// Its own single-call fetch lock, which the conformance suite does not call.
    @Test("a fetch lock has one holder until it is released or expires")
    func fetchLock() async throws {
        let clock = ManualClock()
        let store = InMemoryGroupsCache(now: clock.now)
        func lock(_ owner: String) async throws -> Bool {
            try await store.acquireFetchLock(anyTransactionID: "c", in: .sandbox, owner: owner, timeToLive: .seconds(5))
        }
        #expect(try await lock("a"))
        #expect(try await lock("b") == false)
        try await store.releaseFetchLock(anyTransactionID: "c", in: .sandbox, owner: "b")
        #expect(try await lock("b") == false)
        // The holder dies: the lock expires.
        clock.advance(by: .seconds(5))
        #expect(try await lock("b"))
        try await store.releaseFetchLock(anyTransactionID: "c", in: .sandbox, owner: "b")
        #expect(try await lock("a"))
    }
}
