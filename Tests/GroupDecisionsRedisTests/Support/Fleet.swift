import GroupDecisions
import GroupDecisionsTesting
import ServingTestSupport
import Testing

@testable import GroupDecisionsRedis

extension GroupDecisionService.Configuration {
    /// The fleet suites' configuration: a shared cache never skipped as slow (a busy machine makes
    /// every call slow, and a skipped cache is the documented exception these suites do not test).
    static var fleet: Self {
        var configuration = Self()
        configuration.sharedCache.health.slowCallsInARow = 0
        // The suites fail the shared cache on purpose: each process then fetches within a share of
        // the budget of its own, which is what they need to see the invalidations race.
        configuration.rateLimits.fallbackShare = 0.25
        // A burst of twice the rate: a new fleet bucket starts with the burst less the rate times the longest wait
        // (none at the defaults), so a first decision finds a token banked, with no extra round trip to wait for one.
        configuration.rateLimits.requestBurst = [.sandbox: 10, .production: 100]
        return configuration
    }
}

/// A process of the fleet: a service over `source` sharing `cache`, with the fleet configuration
/// (then `configure`), on `clock` (its sleeps moving it) or, without one, on the system clock.
func fleetService(
    _ source: some GroupsSource,
    _ cache: (any SharedGroupsCache)?,
    clock: ManualClock? = nil,
    configure: (inout GroupDecisionService.Configuration) -> Void = { _ in }
) throws -> GroupDecisionService {
    try ServiceHarness(
        source: source,
        sharedCache: cache,
        clock: clock ?? ManualClock(),
        time: clock == nil ? .system : .manual,
        configuration: .fleet,
        configure: configure
    )
    .service
}

/// The sources `service` answers the customers with, in turn.
func sources(_ service: GroupDecisionService, _ customers: [String] = ["c1", "c2", "c3"]) async throws -> [String] {
    var sources: [String] = []
    for customer in customers { sources.append(try await service.decide(customer).source.name) }
    return sources
}

extension AnswerWrite {
    /// A write of the conformance suite's answer holding `group`, for `customer`, kept only if no
    /// invalidation came after `generation`.
    static func holding(
        _ group: String,
        for customer: String,
        timeToLive: Duration = .seconds(3600),
        at generation: InvalidationGeneration
    ) -> Self {
        Self(
            SharedGroupsCacheConformance.answer(group),
            anyTransactionID: customer,
            in: .sandbox,
            timeToLive: timeToLive,
            groupIDs: [group],
            ifGeneration: generation
        )
    }
}

extension ServedDecision {
    /// Where the answer came from, by name, and the capabilities granted, sorted.
    var outcome: (source: String, capabilities: [String]) { (source.name, decision.capabilities.sorted()) }
}

/// Where the processes of a fleet share their caches: one in-memory cache, or two stores (two
/// processes' connections) on one real redis-server of the test's own.
enum SharedStore: String, CaseIterable, Sendable {
    case inMemory, redis

    /// The two processes' caches, and the server that holds them (the caller keeps it, and stops it).
    func pair(
        prefix: String = "fleet"
    ) async throws -> (any SharedGroupsCache, any SharedGroupsCache, RedisServer?) {
        switch self {
        case .inMemory:
            let shared = InMemoryGroupsCache()
            return (shared, shared, nil)
        case .redis:
            let server = try await RedisServer.start()
            let (first, second) = try server.pair(prefix: prefix)
            return (first, second, server)
        }
    }
}

/// The three invalidations, by name: customer `c`, group `g1`, everyone.
enum Invalidation: String, CaseIterable, Sendable {
    case customer, group, all

    func run(on service: GroupDecisionService) async throws {
        switch self {
        case .customer: try await service.invalidate(anyTransactionID: "c")
        case .group: try await service.invalidate(groupID: "g1")
        case .all: try await service.invalidateAll()
        }
    }

    func run(on store: RedisGroupsCache) async throws {
        switch self {
        case .customer: try await store.invalidate(anyTransactionID: "c")
        case .group: try await store.invalidate(groupID: "g1")
        case .all: try await store.invalidateAll()
        }
    }
}

extension RedisGroupsCache {
    /// Sends a command the store never sends itself (`SET`, `DEL`, `PTTL`, `FLUSHALL`) on the store's connections.
    @discardableResult
    func send(_ words: [String]) async throws -> RESPReply {
        try await call(words.map { Array($0.utf8) }, words[0])
    }

    /// The milliseconds Redis gives a key still to live (-2: no such key; -1: no expiry).
    func millisecondsToLive(_ key: [UInt8]) async throws -> Int64? {
        guard case .integer(let left) = try await call([Array("PTTL".utf8), key], "PTTL") else { return nil }
        return left
    }

    /// The invalidation count, which must exist, be a value a fresh one may be, and be what Redis holds under its key.
    func freshCount(sourceLocation: SourceLocation = #_sourceLocation) async throws -> UInt64 {
        let count = try #require(try await invalidationCount(), sourceLocation: sourceLocation)
        #expect(Self.invalidationCounts.contains(count), sourceLocation: sourceLocation)
        let stored = try await call([Array("GET".utf8), invalidationCountKey], "GET")
        #expect(stored == .bulk(Array(String(count).utf8)), sourceLocation: sourceLocation)
        return count
    }
}

extension RESPReply {
    /// The bytes of a bulk reply (empty for anything else).
    var bulkValue: [UInt8] {
        if case .bulk(let value?) = self { return value }
        return []
    }
}
