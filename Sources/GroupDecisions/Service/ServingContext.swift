import AppStoreGroups
import Foundation
import GroupPolicy

/// What every step of a decision shares, built once by the service: the clock, the observer, the
/// caches, the freshness windows and the settings of the caches.
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
    /// The windows an answer's age is read against.
    let windows: FreshnessWindows
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
        self.windows = FreshnessWindows(configuration.freshness)
        self.sharedCacheSettings = configuration.sharedCache
        self.localCacheSettings = configuration.localCache
    }
}
