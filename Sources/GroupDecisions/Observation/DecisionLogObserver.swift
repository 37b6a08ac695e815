/// The observer of a service given a decision log: the app's observer hears every event, then the
/// log receives each decision's record, so the record travels the observer's one path.
struct DecisionLogObserver: GroupDecisionObserver {
    let observer: any GroupDecisionObserver
    let log: DecisionLog

    /// `observer` alone without a log, or with `log` after it.
    static func observer(
        _ observer: (any GroupDecisionObserver)?,
        log: DecisionLog?
    ) -> (any GroupDecisionObserver)? {
        guard let log else { return observer }
        return DecisionLogObserver(observer: observer ?? SilentObserver(), log: log)
    }

    func decisionRecorded(_ record: DecisionLogRecord) {
        observer.decisionRecorded(record)
        log.record(record)
    }

    func cacheHit(_ event: GroupDecisionEvent.CacheHit) { observer.cacheHit(event) }
    func cacheMiss(_ event: GroupDecisionEvent.CacheMiss) { observer.cacheMiss(event) }
    func staleServed(_ event: GroupDecisionEvent.StaleServed) { observer.staleServed(event) }
    func fetchStarted(_ event: GroupDecisionEvent.FetchStarted) { observer.fetchStarted(event) }
    func fetchFinished(_ event: GroupDecisionEvent.FetchFinished) { observer.fetchFinished(event) }
    func rateLimited(_ event: GroupDecisionEvent.RateLimited) { observer.rateLimited(event) }
    func budgetExhausted(_ event: GroupDecisionEvent.BudgetExhausted) { observer.budgetExhausted(event) }
    func sharedCacheFailed(_ event: GroupDecisionEvent.SharedCacheFailure) { observer.sharedCacheFailed(event) }
    func sharedCacheRecovered(_ event: GroupDecisionEvent.SharedCacheRecovery) {
        observer.sharedCacheRecovered(event)
    }
    func invalidated(_ event: GroupDecisionEvent.Invalidation) { observer.invalidated(event) }
    func policyReloaded(_ event: GroupDecisionEvent.PolicyReload) { observer.policyReloaded(event) }
    func policyReloadFailed(_ event: GroupDecisionEvent.PolicyReloadFailure) { observer.policyReloadFailed(event) }
}
