import AppStoreGroups
import Foundation
import GroupPolicy

/// What every step of a decision shares, built once by the service: each step (``LocalCopies``,
/// ``SharedFlight``, ``Fetcher``, ``AnswerKeeper``) holds this plus its own collaborators, so a
/// collaborator every step needs is added here once.
struct ServingContext: Sendable {
    let timeSource: TimeSource
    let observer: any GroupDecisionObserver
    /// This process's cache of answers.
    let local: LocalGroupsCache
    /// The shared cache, through its guard, or `nil` for this process alone.
    let shared: SharedCacheGuard?
    /// With a shared cache: its invalidation count as this process read it, which decides whether
    /// a copy kept here may be served.
    let invalidations: InvalidationWatch?
    /// Every window of an answer's life: the one timeline every step asks.
    let freshness: FreshnessPolicy
    /// The fetch lock's settings, and (with a shared cache) the longest a copy is kept here, as
    /// the configuration gives them.
    let fetchLockTimeToLive: Duration
    let fetchLockWait: Duration
    let fetchLockPollInterval: Duration
    let localCopyTimeToLive: Duration

    /// The cached answer as a flight result when the freshness policy's `verdict` serves it as it
    /// is (fresh, or due a refresh ahead), told to the observer as a cache hit; throws a negative
    /// answer so served (a hit too); `nil` otherwise.
    func servedAsItIs(
        _ answer: CachedGroupsAnswer,
        decoded: GetCustomerGroupsResponse? = nil,
        verdict: FreshnessPolicy.Verdict,
        in environment: StoreEnvironment,
        fromSharedCache: Bool
    ) throws(AppStoreGroupsError) -> LoadedGroups? {
        guard verdict == .fresh || verdict == .refreshDue else { return nil }
        let loaded = answer.kind == .groups ? LoadedGroups(answer, decoded: decoded, source: .cache) : nil
        guard loaded != nil || answer.kind == .notFound else { return nil }
        observer.cacheHit(
            GroupDecisionEvent.CacheHit(
                environment: environment,
                fetchedAt: answer.fetchedAt,
                fromSharedCache: fromSharedCache
            )
        )
        guard let loaded else { throw LoadedGroups.notFound(since: answer.fetchedAt) }
        return loaded
    }

    /// The freshness policy's verdict on `answer` now, for the customer's draw of the spread.
    func verdict(_ answer: CachedGroupsAnswer, customerID: String, now: Date) -> FreshnessPolicy.Verdict {
        freshness.verdict(answer.kind, fetchedAt: answer.fetchedAt, now: now, customerID: customerID)
    }
}
