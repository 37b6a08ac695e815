import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// Redis's invalidation count never comes back to a value a process remembers.
///
/// Every invalidation sets a fresh random value, and a read that finds the count missing (a flush, a restart without
/// persistence, an expiry) creates one; a count a lagging replica set back, or one that went down, is a move like any
/// other. Each case ends with a process serving nothing of the copy the invalidation removed.
@Suite(
    "Redis invalidation count: every invalidation a value never read before, a lost count never read as one",
    .requires(.redisServer)
)
struct InvalidationCountTests {
    /// The test's own redis-server: Swift Testing makes the suite for each test, and the server stops with that suite.
    let server: RedisServer

    init() async throws { server = try await RedisServer.start() }

    @Test(
        "every kind of invalidation sets a fresh value kept without expiry, in the script that forgets the answers; a read that finds none creates one (real redis-server)",
        arguments: Invalidation.allCases
    )
    func everyInvalidationSetsAFreshValue(_ invalidation: Invalidation) async throws {
        let store = try server.store(prefix: "first")
        let other = try server.store(prefix: "second")
        let key = String(decoding: store.invalidationCountKey, as: UTF8.self)
        // An invalidation of a store that has no count yet sets one (no read created it).
        try await invalidation.run(on: store)
        try await invalidation.run(on: other)
        var seen = [try await store.freshCount(), try await other.freshCount()]
        #expect(seen[0] != seen[1])
        // Someone gave the count a time to live: the next invalidations set fresh values that never
        // expire (a count that lapsed would be read missing, and created again).
        try await store.send(["SET", key, "41", "PX", "600000"])
        for _ in 0..<2 {
            try await invalidation.run(on: store)
            let count = try await store.freshCount()
            #expect(!seen.contains(count) && count != 41)
            seen.append(count)
        }
        #expect(try await store.send(["PTTL", key]) == .integer(-1))
        // Given a time to live again and expired: the read that finds it missing creates a fresh
        // value, which holds until the next invalidation.
        try await store.send(["PEXPIRE", key, "1"])
        try await waitUntil { try await store.send(["EXISTS", key]) == .integer(0) }
        let created = try await store.freshCount()
        #expect(!seen.contains(created))
        #expect(try await store.freshCount() == created)
        #expect(try await store.send(["PTTL", key]) == .integer(-1))
        seen.append(created)
        // Read with an answer in one step; with a missing count, the combined read creates it too.
        let answer = SharedGroupsCacheConformance.answer("g2")
        try await store.setAnswer(answer, anyTransactionID: "c2", in: .sandbox, timeToLive: .seconds(600))
        let read = try await store.answerAndInvalidationCount(anyTransactionID: "c2", in: .sandbox)
        #expect(read.answer == answer && read.invalidationCount == created)
        try await store.send(["DEL", key])
        let again = try await store.answerAndInvalidationCount(anyTransactionID: "c2", in: .sandbox)
        let recreated = try #require(again.invalidationCount)
        #expect(again.answer == answer)
        #expect(!seen.contains(recreated))
        #expect(try await store.freshCount() == recreated)
    }

    /// How a count a process remembers goes missing, back or down.
    enum Mishap: String, CaseIterable, Sendable {
        /// Read before any invalidation (the read created it), invalidated, then lost with the store.
        case lostAfterFirstRead
        /// Lost with the store, then invalidated as often again (counted from 0, the remembered one).
        case lostAndInvalidatedAgain
        /// Set back by a replica that lagged one invalidation behind.
        case setBackByLaggingReplica
        /// Gone down to 1, the answers with it, without an invalidation.
        case wentDown
        /// Negative, as an earlier version's INCR takes it: read as a count, replaced by an invalidation.
        case negative
    }

    @Test(
        "a count lost, set back, gone down or negative never confirms a copy stamped with the one a process remembers (real redis-server)",
        arguments: Mishap.allCases
    )
    func rememberedCountNeverReadAgain(_ mishap: Mishap) async throws {
        let clock = ManualClock(Date())
        let (storeA, storeB) = try server.pair(prefix: "m", now: clock.now)
        let apple = StaticGroupsSource(["c": Families.member])
        let serviceA = try fleetService(apple, storeA, clock: clock)
        let serviceB = try fleetService(apple, storeB, clock: clock)
        var read: [UInt64] = []
        if mishap != .lostAfterFirstRead {
            try await storeA.invalidate(anyTransactionID: "x1")
            read.append(try await storeA.freshCount())
            try await storeA.invalidate(anyTransactionID: "x2")
        }
        // B keeps its copy of c, stamped with the count it read; A reads the same.
        let remembered = try await storeB.freshCount()
        #expect(try await storeA.invalidationCount() == remembered)
        read.append(remembered)
        #expect(try await serviceB.decide("c").source == .live)
        apple.setAnswer(Families.noGroups, for: "c")
        switch mishap {
        case .lostAfterFirstRead:
            // Through A, c's invalidation completes and returns; then the store loses everything.
            try await serviceA.invalidate(anyTransactionID: "c")
            read.append(try await storeA.freshCount())
            try await storeA.send(["FLUSHALL"])
        case .lostAndInvalidatedAgain:
            try await storeA.send(["FLUSHALL"])
            try await storeA.invalidate(anyTransactionID: "x3")
            try await serviceA.invalidate(anyTransactionID: "c")
        case .setBackByLaggingReplica:
            try await storeA.send(["SET", "m:invalidations", String(read[0])])
            try await serviceA.invalidate(anyTransactionID: "c")
        case .wentDown:
            try await storeA.send(["FLUSHALL"])
            try await storeA.send(["SET", "m:invalidations", "1"])
            clock.advance(by: serviceB.configuration.sharedCache.invalidationCheckInterval)
        case .negative:
            try await storeA.send(["SET", "m:invalidations", "-5"])
            #expect(try await storeB.invalidationCount() == UInt64(bitPattern: -5))
            try await serviceA.invalidate(anyTransactionID: "c")
        }
        #expect(try await serviceB.decide("c").outcome == ("live", []))
        #expect(apple.callCount == 2)
        let final = try await storeA.freshCount()
        if mishap != .wentDown { #expect(!read.contains(final)) }
    }

    /// A refresh that read its generation before a group's invalidation, whose answer comes after the store lost its
    /// keys: every count read as zero again, so the old answer matched and was kept in the emptied store, served by
    /// every process (the fleet simulation's seed 2675 found it in its model store, which counted as Redis did).
    @Test(
        "a write read before an invalidation and a flush is refused, with or without the lock (real redis-server)"
    )
    func writeReadBeforeAFlushIsRefused() async throws {
        let store = try server.store(prefix: "flushed")
        func write(_ customer: String, _ generation: InvalidationGeneration) -> AnswerWrite {
            AnswerWrite(
                SharedGroupsCacheConformance.answer("g1"),
                anyTransactionID: customer,
                in: .production,
                timeToLive: .seconds(60),
                groupIDs: ["g1"],
                ifGeneration: generation
            )
        }
        let lockFree = try await store.invalidationGeneration(anyTransactionID: "c1", in: .production)
        let locked = try await store.acquireFetchLockAndRead(
            anyTransactionID: "c2",
            in: .production,
            owner: "o",
            timeToLive: .seconds(60)
        )
        #expect(locked.acquired)
        try await store.invalidate(groupID: "g1")
        try await store.send(["FLUSHALL"])
        #expect(try await store.setAnswer(write("c1", lockFree)) == false)
        let lockedGeneration = try #require(locked.generation)
        #expect(try await store.setAnswer(write("c2", lockedGeneration), releasingFetchLock: "o") == false)
        #expect(try await store.answer(anyTransactionID: "c1", in: .production) == nil)
        #expect(try await store.answer(anyTransactionID: "c2", in: .production) == nil)
        // Read after the loss, a generation is new and its writes are kept.
        let after = try await store.invalidationGeneration(anyTransactionID: "c1", in: .production)
        #expect(after.all != lockFree.all)
        #expect(try await store.setAnswer(write("c1", after)))
    }

    @Test(
        "a count out of range or not a number: reads fail closed, the hit falls back to the shared answer, and an invalidation replaces it (real redis-server)",
        arguments: [
            ("9223372036854775807", true), ("18446744073709551615", true), ("99999999999999999999999", false),
            (" 1", false), ("1.0", false), ("x1", false),
        ]
    )
    func malformedCount(_ value: String, readable: Bool) async throws {
        let clock = ManualClock(Date())
        let store = try server.store(prefix: "bad", now: clock.now)
        let apple = StaticGroupsSource(["c": Families.member])
        // A failed read does not make the next call skip the cache: the shared answer is read.
        let service = try fleetService(apple, store, clock: clock) { $0.sharedCache.health.retryInterval = .zero }
        #expect(try await service.decide("c").source == .live)
        try await store.send(["SET", "bad:invalidations", value])
        // Read as a count (a move), or a store failure naming the script: either way this process's
        // copy goes unserved, and the answer comes from the shared cache.
        if readable {
            #expect(try await store.invalidationCount() == UInt64(value))
            _ = try await store.answerAndInvalidationCount(anyTransactionID: "c", in: .sandbox)
        } else {
            let prefix = "Redis at 127.0.0.1:\(server.port): "
            let count = await expectError { _ = try await store.invalidationCount() }
            #expect(count?.message == prefix + "EVAL read-invalidations: an unexpected value")
            let both = await expectError {
                _ = try await store.answerAndInvalidationCount(anyTransactionID: "c", in: .sandbox)
            }
            #expect(both?.message == prefix + "EVAL read-answer-invalidations: an unexpected array")
        }
        // Another answer in the shared cache, written with no invalidation: the hit past the check interval serves it.
        let noGroups = CachedGroupsAnswer(kind: .groups, body: Array(#"{"groups":[]}"#.utf8), fetchedAt: clock.date)
        try await store.setAnswer(noGroups, anyTransactionID: "c", in: .sandbox, timeToLive: .seconds(60))
        clock.advance(by: service.configuration.sharedCache.invalidationCheckInterval)
        apple.setAnswer(Families.noGroups, for: "c")
        #expect(try await service.decide("c").outcome == ("cache", []))
        #expect(apple.callCount == 1)
        // The invalidation sets a fresh value in its place: the count is readable again.
        try await service.invalidate(anyTransactionID: "c")
        _ = try await store.freshCount()
        #expect(try await service.decide("c").outcome == ("live", []))
    }

    @Test(
        "first invalidations and reads from many processes at once on an empty store: every process reads the one value left (real redis-server)"
    )
    func concurrentFirstInvalidations() async throws {
        let stores = try (0..<8).map { _ in try server.store(prefix: "race") }
        let readings = try await withThrowingTaskGroup(of: UInt64?.self) { group in
            for (index, store) in stores.enumerated() {
                group.addTask {
                    switch index % 4 {
                    case 0: try await store.invalidate(anyTransactionID: "c\(index)")
                    case 1: try await store.invalidate(groupID: "g\(index)")
                    case 2: try await store.invalidateAll()
                    default: return try await store.invalidationCount()
                    }
                    return nil
                }
            }
            return try await group.reduce(into: [UInt64]()) { if let reading = $1 { $0.append(reading) } }
        }
        #expect(readings.count == 2)
        let count = try await stores[0].freshCount()
        for store in stores { #expect(try await store.invalidationCount() == count) }
        // One more moves it, to a value none of them read.
        try await stores[1].invalidate(anyTransactionID: "x")
        let next = try await stores[0].freshCount()
        #expect(next != count)
        #expect(!readings.contains(next))
    }
}
