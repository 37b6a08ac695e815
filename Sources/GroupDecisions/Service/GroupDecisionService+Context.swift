import AppStoreGroups
import Foundation
import GroupPolicy

/// The context a service builds from its configuration, once, for every step of its decisions.
extension ServingContext {
    /// The context of a service with `configuration`, checked first.
    ///
    /// - Throws: `AppStoreGroupsError.Code.invalidConfiguration` for a configuration out of range.
    init(
        configuration: GroupDecisionService.Configuration,
        sharedCaches: SharedCaches,
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
        self.init(
            timeSource: timeSource,
            observer: observer,
            local: local,
            shared: sharedCaches.isEmpty
                ? nil
                : SharedCacheGuard(
                    sharedCaches,
                    health: configuration.sharedCache.health,
                    timeSource: timeSource,
                    observer: observer
                ),
            invalidations: sharedCaches.used.answers.map { _ in
                InvalidationWatch(
                    interval: configuration.sharedCache.invalidationCheckInterval,
                    local: local,
                    now: timeSource.now
                )
            },
            freshness: configuration.freshness,
            fetchLockTimeToLive: configuration.sharedCache.fetchLockTimeToLive,
            fetchLockWait: configuration.sharedCache.fetchLockWait,
            fetchLockPollInterval: configuration.sharedCache.fetchLockPollInterval,
            localCopyTimeToLive: configuration.localCache.timeToLive
        )
    }
}
