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
/// Every invalidation sets a fresh random value, and a read that finds the count missing (a flush,
/// a restart without persistence) creates one; a count a lagging replica set back, or one that went
/// down, is a move like any other. Each case ends with a process serving nothing of the copy the
/// invalidation removed.
@Suite("Redis invalidation count: every invalidation a value never read before, a lost count never read as one")
struct InvalidationCountValueTests {
    static let counts = RedisGroupsCache.invalidationCounts

    static func set(_ store: RedisGroupsCache, _ key: String, _ value: String) async throws {
        _ = try await store.call([Array("SET".utf8), Array(key.utf8), Array(value.utf8)], "SET")
    }

    static func flush(_ store: RedisGroupsCache) async throws {
        _ = try await store.call([Array("FLUSHALL".utf8)], "FLUSHALL")
    }

    /// A refresh that read its generation before a group's invalidation, whose answer comes after
    /// the store lost its keys: every count read as zero again, so the old answer matched and was
    /// kept in the emptied store, served by every process (the fleet simulation's seed 2675 found it
    /// in its model store, which counted as Redis did).
    @Test(
        "a write read before an invalidation and a flush is refused, with or without the lock (real redis-server)",
        .requires(.redisServer)
    )
    func writeReadBeforeAFlushIsRefused() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store(prefix: "flushed")
        defer { store.close() }
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
        try await Self.flush(store)
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
        "a process that read a count before any invalidation, then one it did not read, then a store that lost its keys (real redis-server)",
        .requires(.redisServer)
    )
    func missingCountRememberedThenLost() async throws {
        let fleet = try await RedisFleet.start()
        defer { fleet.stop() }
        let clock = ManualClock(Date())
        let (storeA, storeB) = try fleet.pair(prefix: "zero", now: clock.now)
        let apple = StaticGroupsSource(["c": Families.member])
        let serviceA = try FleetInvalidationTests.clockedService(apple, shared: storeA, clock: clock)
        let serviceB = try FleetInvalidationTests.clockedService(apple, shared: storeB, clock: clock)
        // A store no invalidation has reached yet: the first read creates the count at a fresh value,
        // and B keeps its copy of c stamped with it.
        let first = try #require(try await storeB.invalidationCount())
        #expect(Self.counts.contains(first))
        #expect(try await storeA.invalidationCount() == first)
        #expect(try await serviceB.decision(anyTransactionID: "c", environment: .sandbox).source == .live)
        // Through A, c's invalidation completes and returns; B serves nothing meanwhile.
        apple.setAnswer(Families.noGroups, for: "c")
        try await serviceA.invalidate(anyTransactionID: "c")
        #expect(try await storeA.invalidationCount() != first)
        // The store then loses everything (a restart without persistence): the count is missing
        // again, and the read that finds it so creates a fresh one, not the one B remembers.
        try await Self.flush(storeA)
        let served = try await serviceB.decision(anyTransactionID: "c", environment: .sandbox)
        #expect(served.source == .live)
        #expect(served.decision.capabilities.sorted() == [])
        #expect(try await storeA.invalidationCount() != first)
    }

    @Test(
        "a count lost with the store (restart, flush) and invalidated as often again never reads as the remembered one (real redis-server)",
        .requires(.redisServer)
    )
    func countLostAndInvalidatedAgain() async throws {
        let fleet = try await RedisFleet.start()
        defer { fleet.stop() }
        let clock = ManualClock(Date())
        let (storeA, storeB) = try fleet.pair(prefix: "aba", now: clock.now)
        let apple = StaticGroupsSource(["c": Families.member])
        let serviceA = try FleetInvalidationTests.clockedService(apple, shared: storeA, clock: clock)
        let serviceB = try FleetInvalidationTests.clockedService(apple, shared: storeB, clock: clock)
        // Two invalidations of others, then B keeps its copy of c, stamped with the count they left.
        try await storeA.invalidate(anyTransactionID: "x1")
        try await storeA.invalidate(anyTransactionID: "x2")
        let remembered = try #require(try await storeB.invalidationCount())
        #expect(try await serviceB.decision(anyTransactionID: "c", environment: .sandbox).source == .live)
        // The store loses everything (a restart without persistence; a failover to an empty replica).
        try await Self.flush(storeA)
        // One invalidation of another customer, then c's: as many as before the loss. Counted from
        // 0, the count would be the remembered one again.
        try await storeA.invalidate(anyTransactionID: "x3")
        apple.setAnswer(Families.noGroups, for: "c")
        try await serviceA.invalidate(anyTransactionID: "c")
        #expect(try await storeA.invalidationCount() != remembered)
        let served = try await serviceB.decision(anyTransactionID: "c", environment: .sandbox)
        #expect(served.source == .live)
        #expect(served.decision.capabilities.sorted() == [])
        #expect(apple.callCount == 2)
    }

    @Test(
        "every kind of invalidation sets a fresh value, never one read before, after a flush too (real redis-server)",
        .requires(.redisServer),
        arguments: InvalidationCountTests.Invalidation.allCases
    )
    func everyInvalidationSetsAFreshValue(_ invalidation: InvalidationCountTests.Invalidation) async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let first = try server.store(prefix: "first")
        defer { first.close() }
        let second = try server.store(prefix: "second")
        defer { second.close() }
        let sources = StaticGroupsSource(["c": Families.member])
        let serviceFirst = try FleetInvalidationTests.service(sources, shared: first)
        let serviceSecond = try FleetInvalidationTests.service(sources, shared: second)
        // An invalidation of a store that has no count yet sets one (no read created it).
        try await invalidation.run(on: serviceFirst)
        try await invalidation.run(on: serviceSecond)
        let one = try #require(try await first.invalidationCount())
        let other = try #require(try await second.invalidationCount())
        #expect(Self.counts.contains(one))
        #expect(Self.counts.contains(other))
        #expect(one != other)
        // The next one moves it again, to a value never read before.
        var read: Set<UInt64> = [one, other]
        try await invalidation.run(on: serviceFirst)
        let next = try #require(try await first.invalidationCount())
        #expect(Self.counts.contains(next))
        #expect(!read.contains(next))
        read.insert(next)
        // Lost with the store: the read that finds it missing creates a fresh value, and it holds
        // until the next invalidation.
        try await Self.flush(first)
        let created = try #require(try await first.invalidationCount())
        #expect(Self.counts.contains(created))
        #expect(!read.contains(created))
        #expect(try await first.invalidationCount() == created)
        read.insert(created)
        try await invalidation.run(on: serviceFirst)
        let again = try #require(try await first.invalidationCount())
        #expect(Self.counts.contains(again))
        #expect(!read.contains(again))
    }

    @Test(
        "a count set back by a replica that lagged: it and the next invalidation are moves, not the remembered value (real redis-server)",
        .requires(.redisServer)
    )
    func countSetBackByLaggingReplica() async throws {
        let fleet = try await RedisFleet.start()
        defer { fleet.stop() }
        let clock = ManualClock(Date())
        let (storeA, storeB) = try fleet.pair(prefix: "lag", now: clock.now)
        let apple = StaticGroupsSource(["c": Families.member])
        let serviceA = try FleetInvalidationTests.clockedService(apple, shared: storeA, clock: clock)
        let serviceB = try FleetInvalidationTests.clockedService(apple, shared: storeB, clock: clock)
        try await storeA.invalidate(anyTransactionID: "x1")
        let lagging = try #require(try await storeA.invalidationCount())
        try await storeA.invalidate(anyTransactionID: "x2")
        let remembered = try #require(try await storeB.invalidationCount())
        #expect(try await serviceB.decision(anyTransactionID: "c", environment: .sandbox).source == .live)
        // The replica that takes over had the count before the last invalidation; c's invalidation
        // through it sets a fresh value rather than counting up to the one B remembers.
        try await Self.set(storeA, "lag:invalidations", String(lagging))
        apple.setAnswer(Families.noGroups, for: "c")
        try await serviceA.invalidate(anyTransactionID: "c")
        let after = try #require(try await storeA.invalidationCount())
        #expect(after != remembered)
        #expect(after != lagging)
        let served = try await serviceB.decision(anyTransactionID: "c", environment: .sandbox)
        #expect(served.source == .live)
        #expect(served.decision.capabilities.sorted() == [])
    }

    @Test(
        "a count that went down is a move: the copies stamped with the higher count go (real redis-server)",
        .requires(.redisServer)
    )
    func countWentDown() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let clock = ManualClock(Date())
        let store = try server.store(prefix: "down", now: clock.now)
        defer { store.close() }
        let apple = StaticGroupsSource(["c": Families.member])
        let service = try FleetInvalidationTests.clockedService(apple, shared: store, clock: clock)
        try await store.invalidate(anyTransactionID: "x1")
        try await store.invalidate(anyTransactionID: "x2")
        #expect(try await service.decision(anyTransactionID: "c", environment: .sandbox).source == .live)
        // The count goes back to 1; the answer written in the shared cache goes with the flush.
        try await Self.flush(store)
        try await Self.set(store, "down:invalidations", "1")
        apple.setAnswer(Families.noGroups, for: "c")
        clock.advance(by: service.configuration.sharedCache.invalidationCheckInterval)
        let served = try await service.decision(anyTransactionID: "c", environment: .sandbox)
        #expect(served.source == .live)
        #expect(served.decision.capabilities.sorted() == [])
        #expect(apple.callCount == 2)
    }

    @Test(
        "a negative count (an earlier version's INCR takes one) reads as a count; an invalidation replaces it (real redis-server)",
        .requires(.redisServer)
    )
    func negativeCount() async throws {
        let fleet = try await RedisFleet.start()
        defer { fleet.stop() }
        let clock = ManualClock(Date())
        let (storeA, storeB) = try fleet.pair(prefix: "neg", now: clock.now)
        let apple = StaticGroupsSource(["c": Families.member])
        let serviceA = try FleetInvalidationTests.clockedService(apple, shared: storeA, clock: clock)
        let serviceB = try FleetInvalidationTests.clockedService(apple, shared: storeB, clock: clock)
        #expect(try await serviceB.decision(anyTransactionID: "c", environment: .sandbox).source == .live)
        try await Self.set(storeA, "neg:invalidations", "-5")
        #expect(try await storeB.invalidationCount() == UInt64(bitPattern: -5))
        apple.setAnswer(Families.noGroups, for: "c")
        var refused: AppStoreGroupsError?
        do { try await serviceA.invalidate(anyTransactionID: "c") } catch { refused = error }
        let served = try await serviceB.decision(anyTransactionID: "c", environment: .sandbox)
        #expect(refused == nil)
        #expect(served.source == .live)
        #expect(served.decision.capabilities.sorted() == [])
        let count = try #require(try await storeB.invalidationCount())
        #expect(Self.counts.contains(count))
    }

    @Test(
        "a count out of range or not a number: reads fail and no copy is served; an invalidation replaces it (real redis-server)",
        .requires(.redisServer),
        arguments: [
            ("9223372036854775807", true), ("18446744073709551615", true), ("99999999999999999999999", false),
            (" 1", false), ("1.0", false),
        ]
    )
    func countOutOfRange(_ value: String, readable: Bool) async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let clock = ManualClock(Date())
        let store = try server.store(prefix: "big", now: clock.now)
        defer { store.close() }
        let apple = StaticGroupsSource(["c": Families.member])
        // A failed read does not make the next call skip the cache: the shared answer is read.
        var configuration = FleetInvalidationTests.configuration
        configuration.sharedCache.health.retryInterval = .zero
        let service = try ServiceHarness(
            source: apple,
            sharedCache: store,
            clock: clock,
            configuration: configuration
        )
        .service
        #expect(try await service.decision(anyTransactionID: "c", environment: .sandbox).source == .live)
        try await Self.set(store, "big:invalidations", value)
        // Read as a count (a move), or a store failure: either way this process's copy goes unserved,
        // and the answer comes from the shared cache.
        var read: AppStoreGroupsError?
        do { _ = try await store.invalidationCount() } catch { read = error }
        #expect((read == nil) == readable)
        #expect(read.map { $0.code == .sharedCacheFailure } ?? true)
        clock.advance(by: service.configuration.sharedCache.invalidationCheckInterval)
        apple.setAnswer(Families.noGroups, for: "c")
        let before = try await service.decision(anyTransactionID: "c", environment: .sandbox)
        #expect(before.source == .cache)
        #expect(apple.callCount == 1)
        // The invalidation sets a fresh value in its place: nothing is granted after it.
        try await service.invalidate(anyTransactionID: "c")
        let count = try #require(try await store.invalidationCount())
        #expect(Self.counts.contains(count))
        let after = try await service.decision(anyTransactionID: "c", environment: .sandbox)
        #expect(after.source == .live)
        #expect(after.decision.capabilities.sorted() == [])
    }

    @Test(
        "a count someone gave a time to live: an invalidation sets a fresh value that never expires; once gone, a read creates one (real redis-server)",
        .requires(.redisServer)
    )
    func countWithTimeToLive() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store(prefix: "ttl")
        defer { store.close() }
        let key = Array("ttl:invalidations".utf8)
        let set = ["SET", "ttl:invalidations", "41", "PX", "600000"].map { Array($0.utf8) }
        _ = try await store.call(set, "SET")
        try await store.invalidate(anyTransactionID: "c")
        let count = try #require(try await store.invalidationCount())
        #expect(count != 41)
        #expect(Self.counts.contains(count))
        #expect(try await store.call([Array("PTTL".utf8), key], "PTTL") == .integer(-1))
        // Given a time to live again and expired: missing, so the next read creates a fresh value.
        _ = try await store.call([Array("PEXPIRE".utf8), key, Array("1".utf8)], "PEXPIRE")
        try await Task.sleep(for: .milliseconds(50))
        let created = try #require(try await store.invalidationCount())
        #expect(created != count)
        #expect(Self.counts.contains(created))
        #expect(try await store.call([Array("PTTL".utf8), key], "PTTL") == .integer(-1))
    }

    @Test(
        "first invalidations and reads from many processes at once on an empty store: every process reads the one value left (real redis-server)",
        .requires(.redisServer)
    )
    func concurrentFirstInvalidations() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let stores = try (0..<8).map { _ in try server.store(prefix: "race") }
        defer { for store in stores { store.close() } }
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
        let count = try #require(try await stores[0].invalidationCount())
        #expect(Self.counts.contains(count))
        for store in stores { #expect(try await store.invalidationCount() == count) }
        // One more moves it, to a value none of them read.
        try await stores[1].invalidate(anyTransactionID: "x")
        let next = try #require(try await stores[0].invalidationCount())
        #expect(next != count)
        #expect(!readings.contains(next))
    }
}
