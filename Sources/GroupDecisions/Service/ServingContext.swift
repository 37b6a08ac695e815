import AppStoreGroups
import Foundation
import GroupPolicy

/// What every step of a decision shares, built once by the service: the clock, the observer, the
/// caches, the freshness policy and the settings of the caches.
///
/// Each step (``LocalCopies``, ``SharedFlight``, ``Fetcher``, ``AnswerKeeper``) holds
/// this plus its own collaborators, so a collaborator every step needs is added here once.
struct ServingContext: Sendable {
    /// The wall clock and sleep.
    let timeSource: TimeSource
    /// Told what the service does.
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
    /// The fetch lock's and the invalidation check's settings.
    let sharedCacheSettings: GroupDecisionService.Configuration.SharedCache
    /// This process's cache's settings.
    let localCacheSettings: GroupDecisionService.Configuration.LocalCache

    /// The context of a service with `configuration`, checked first.
    ///
    /// - Throws: `AppStoreGroupsError.Code.invalidConfiguration` for a configuration out of range.
    init(
        configuration: GroupDecisionService.Configuration,
        sharedCache: (any SharedGroupsCache)?,
        timeSource: TimeSource,
        observer: (any GroupDecisionObserver)?
    ) throws(AppStoreGroupsError) {
        if let problem = configuration.problem {
            throw AppStoreGroupsError(code: .invalidConfiguration, message: problem)
        }
        let observer = observer ?? SilentObserver()
        let trims = configuration.localCache.returnsFreedMemoryToSystem
        let local = LocalGroupsCache(capacityBytes: configuration.localCache.capacityBytes) {
            if trims { LocalGroupsCache.trimHeap() }
        }
        self.timeSource = timeSource
        self.observer = observer
        self.local = local
        self.shared = sharedCache.map {
            SharedCacheGuard($0, configuration: configuration, timeSource: timeSource, observer: observer)
        }
        self.invalidations =
            sharedCache == nil
            ? nil
            : InvalidationWatch(
                interval: configuration.sharedCache.invalidationCheckInterval,
                local: local,
                now: timeSource.now
            )
        self.freshness = configuration.freshness
        self.sharedCacheSettings = configuration.sharedCache
        self.localCacheSettings = configuration.localCache
    }

    /// The cached answer as a flight result when the freshness policy's `verdict` serves it as it
    /// is (fresh, or due a refresh ahead); throws a negative answer so served (a cache hit too);
    /// `nil` otherwise.
    func servedAsItIs(
        _ answer: CachedGroupsAnswer,
        decoded: GetCustomerGroupsResponse?,
        verdict: FreshnessPolicy.Verdict
    ) throws(AppStoreGroupsError) -> GroupDecisionService.Loaded? {
        guard verdict == .fresh || verdict == .refreshDue else { return nil }
        switch answer.kind {
        case .notFound: throw GroupDecisionService.Loaded.notFound(since: answer.fetchedAt)
        case .groups: return GroupDecisionService.Loaded(answer, decoded: decoded, source: .cache)
        }
    }

    /// The freshness policy's verdict on `answer` now, for the customer's draw of the spread.
    func verdict(_ answer: CachedGroupsAnswer, customerID: String, now: Date) -> FreshnessPolicy.Verdict {
        freshness.verdict(answer.kind, fetchedAt: answer.fetchedAt, now: now, customerID: customerID)
    }
}
