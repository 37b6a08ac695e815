import AppStoreGroups
import GroupPolicy

extension GroupDecisionObserver {
    /// Tells of an answer served from this process's cache or adopted from the shared cache.
    func cacheHit(_ answer: CachedGroupsAnswer, in environment: StoreEnvironment, fromSharedCache: Bool) {
        cacheHit(
            GroupDecisionEvent.CacheHit(
                environment: environment,
                fetchedAt: answer.fetchedAt,
                fromSharedCache: fromSharedCache
            )
        )
    }
}
