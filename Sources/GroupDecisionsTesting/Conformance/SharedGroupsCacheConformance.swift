import AppStoreGroups
import Foundation
public import GroupDecisions
import GroupPolicy

/// The checks every `SharedGroupsCache` must pass for `GroupDecisionService` to keep its
/// guarantees: the in-memory cache, `RedisGroupsCache` and any cache of your own run the same ones.
///
/// It depends on no test framework: call ``run()`` from a Swift Testing or XCTest test, against a
/// real instance of your store that the test starts, and a failure throws a
/// ``ConformanceFailure`` naming the requirement, the value expected and the value found.
///
/// ```swift
/// @Test func conformsToTheSharedCacheContract() async throws {
///     let server = try await startMyStore()
///     let conformance = SharedGroupsCacheConformance {
///         MyGroupsCache(address: server.address, keyPrefix: UUID().uuidString)  // empty each time
///     }
///     try await conformance.run()
/// }
/// ```
///
/// Each check gets a cache of its own from `makeCache`, which must return an empty cache (a fresh
/// key prefix is enough). The checks use customers `c1` to `c3`, mostly in the sandbox, and
/// answers that hold groups `g1`, `g2` and `g3`.
///
/// A cache that keeps the fleet's rate budget (`keepsFleetBudget`)
/// must prove that the budget is the fleet's, not the process's: pass `makeSecondInstance`, which
/// opens another instance over the same storage as a second process of the fleet would (for a
/// network store, a new client on the same server and key prefix; for a store held in the process,
/// the instance itself). Without it, the ``Check/fleetBudget`` check of such a cache fails.
public struct SharedGroupsCacheConformance: Sendable {
    /// One requirement of the contract.
    public enum Check: String, Sendable, CaseIterable {
        /// Answers round-trip, per customer and environment, and expire after their time to live.
        case answers
        /// A write is kept only when no invalidation of the customer, of everyone or of one of its
        /// groups came after the generation it was read at, and the combined calls release the
        /// fetch lock whether the write was kept or refused.
        case conditionalWrites
        /// One holder per customer; released only by its owner.
        case fetchLock
        /// The latest `Retry-After` instant per endpoint and environment is kept.
        case rateLimits
        /// A cache that keeps the fleet's budget hands out its burst across two instances over the
        /// same storage, then no more at once; each endpoint and environment has a budget of its own.
        case fleetBudget
        /// Every invalidation raises the invalidation count (for a cache that counts them).
        case invalidationCount
        /// Every invalidation removes the answers it names, in both environments, and no other:
        /// the answers of a customer, of the customers holding a group, and everyone's.
        case invalidations
    }

    private let makeCache: @Sendable () async throws -> any SharedGroupsCache
    let makeSecondInstance: (@Sendable (any SharedGroupsCache) async throws -> any SharedGroupsCache)?
    let readsWhenFetchLockTaken: Bool

    /// A suite over the caches `makeCache` returns.
    ///
    /// - Parameters:
    ///   - readsWhenFetchLockTaken: Whether the cache reads the answer and generation when another
    ///     process holds the fetch lock (a native `acquireFetchLockAndRead` does; the steps of
    ///     `acquireFetchLockAndReadInSteps` read nothing then). Default `true`.
    ///   - makeSecondInstance: Opens another instance over the storage of the cache it is given, as
    ///     a second process of the fleet would. Required for a cache that keeps the fleet's budget;
    ///     default `nil`.
    ///   - makeCache: Returns an empty cache; called once per check.
    public init(
        readsWhenFetchLockTaken: Bool = true,
        makeSecondInstance: (@Sendable (any SharedGroupsCache) async throws -> any SharedGroupsCache)? = nil,
        makeCache: @escaping @Sendable () async throws -> any SharedGroupsCache
    ) {
        self.readsWhenFetchLockTaken = readsWhenFetchLockTaken
        self.makeSecondInstance = makeSecondInstance
        self.makeCache = makeCache
    }

    /// Runs every check, each on a cache of its own, and throws at the first failure.
    ///
    /// - Throws: ``ConformanceFailure``, or what the cache throws.
    public func run() async throws {
        for check in Check.allCases { try await run(check) }
    }

    /// Runs one check on a cache of its own.
    ///
    /// - Parameter check: The requirement to check.
    /// - Throws: ``ConformanceFailure``, or what the cache throws.
    public func run(_ check: Check) async throws {
        let cache = try await makeCache()
        switch check {
        case .answers: try await checkAnswers(cache)
        case .conditionalWrites: try await checkConditionalWrites(cache)
        case .fetchLock: try await checkFetchLock(cache)
        case .rateLimits: try await checkRateLimits(cache)
        case .fleetBudget: try await checkFleetBudget(cache)
        case .invalidationCount: try await checkInvalidationCount(cache)
        case .invalidations: try await checkInvalidations(cache)
        }
    }

    /// A lock long enough that none expires while a busy machine runs a check.
    package static let lockLifetime = Duration.seconds(3_600)

    /// An answer holding `group`, fetched a second ago, in whole milliseconds (what a cache keeps).
    package static func answer(_ group: String) -> CachedGroupsAnswer {
        let now = (Date().timeIntervalSince1970 * 1000).rounded(.down) / 1000
        return CachedGroupsAnswer(
            kind: .groups,
            body: Array(#"{"groups":[{"groupId":"\#(group)","groupType":"CONSUMER"}]}"#.utf8),
            fetchedAt: Date(timeIntervalSince1970: now - 1)
        )
    }

    package static func generation(_ customer: UInt64, _ all: UInt64, _ groups: UInt64) -> InvalidationGeneration {
        InvalidationGeneration(customer: customer, all: all, groups: groups)
    }

    package static func acquire(_ cache: any SharedGroupsCache, _ owner: String) async throws -> FetchLockAttempt {
        try await cache.acquireFetchLockAndRead(
            anyTransactionID: "c1",
            in: .sandbox,
            owner: owner,
            timeToLive: lockLifetime
        )
    }

    package static func write(
        _ cache: any SharedGroupsCache,
        _ answer: CachedGroupsAnswer,
        groups: [String],
        at generation: InvalidationGeneration,
        releasing owner: String
    ) async throws -> Bool {
        let write = AnswerWrite(
            answer,
            anyTransactionID: "c1",
            in: .sandbox,
            timeToLive: .seconds(3600),
            groupIDs: groups,
            ifGeneration: generation
        )
        return try await cache.setAnswer(write, releasingFetchLock: owner)
    }
}

/// A requirement of the shared-cache contract that a cache did not meet.
public struct ConformanceFailure: Error, Sendable, CustomStringConvertible {
    /// The check that failed.
    public var check: SharedGroupsCacheConformance.Check
    /// What the cache had to do.
    public var requirement: String
    /// The value the contract asks for.
    public var expected: String
    /// The value the cache gave.
    public var actual: String

    /// A failure of `check` to meet `requirement`.
    ///
    /// - Parameters:
    ///   - check: The check that failed.
    ///   - requirement: What the cache had to do.
    ///   - expected: The value the contract asks for.
    ///   - actual: The value the cache gave.
    public init(check: SharedGroupsCacheConformance.Check, requirement: String, expected: String, actual: String) {
        self.check = check
        self.requirement = requirement
        self.expected = expected
        self.actual = actual
    }

    /// `<check>: <requirement>: expected <expected>, got <actual>`.
    public var description: String {
        "\(check.rawValue): \(requirement): expected \(expected), got \(actual)"
    }
}

extension SharedGroupsCacheConformance.Check {
    /// Throws unless `actual` equals `expected`.
    func expect<Value: Equatable>(_ actual: Value, _ expected: Value, _ requirement: String) throws(ConformanceFailure)
    {
        guard actual != expected else { return }
        throw ConformanceFailure(
            check: self,
            requirement: requirement,
            expected: String(describing: expected),
            actual: String(describing: actual)
        )
    }
}
