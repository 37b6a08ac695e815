/// Receives what a ``GroupDecisionService`` does, for an app's logs and metrics.
///
/// Pass one as the service's `observer:`. Every requirement has a default that does nothing, so an
/// observer implements only the events it cares about. Calls come on the thread that did the work,
/// some on the path of a request: return quickly. See the article "Observing decisions" for what
/// holds for every event and for swift-log and swift-metrics adapters.
public protocol GroupDecisionObserver: Sendable {
    /// A decision was served from a cached answer within its time to live.
    func cacheHit(_ event: GroupDecisionEvent.CacheHit)

    /// No fresh answer was cached in this process: the service asks the shared cache or Apple.
    func cacheMiss(_ event: GroupDecisionEvent.CacheMiss)

    /// An answer past its time to live was served marked stale: the budget had no token to spare
    /// for refreshing it, or a fetch failed within the stale-if-error window.
    func staleServed(_ event: GroupDecisionEvent.StaleServed)

    /// A request to Apple is about to be sent (the budget spent, the gate open).
    func fetchStarted(_ event: GroupDecisionEvent.FetchStarted)

    /// A request to Apple ended: with an answer or an error.
    func fetchFinished(_ event: GroupDecisionEvent.FetchFinished)

    /// Apple answered 429: the gate holds every request to that endpoint until the instant.
    func rateLimited(_ event: GroupDecisionEvent.RateLimited)

    /// A call was refused without sending anything: the budget or a `Retry-After` instant was
    /// further away than it may wait.
    func budgetExhausted(_ event: GroupDecisionEvent.BudgetExhausted)

    /// The shared cache failed, or was consistently slow: it is left alone for a while.
    func sharedCacheFailed(_ event: GroupDecisionEvent.SharedCacheFailure)

    /// The shared cache answered again after failing.
    func sharedCacheRecovered(_ event: GroupDecisionEvent.SharedCacheRecovery)

    /// A customer's answers, or every answer, were forgotten.
    func invalidated(_ event: GroupDecisionEvent.Invalidation)

    /// The policies reloaded and a new version serves.
    func policyReloaded(_ event: GroupDecisionEvent.PolicyReload)

    /// The policy files changed but did not load: the previous version keeps serving.
    func policyReloadFailed(_ event: GroupDecisionEvent.PolicyReloadFailure)

    /// A decision was served or refused: its record, as the service's decision log receives it.
    ///
    /// Told only by a service given a `decisionLog:`, whose salt hashes the customer id the record
    /// names; the log hears the same record after the observer.
    ///
    /// - Parameter record: The decision's record, the customer id replaced by its salted hash.
    func decisionRecorded(_ record: DecisionLogRecord)
}

extension GroupDecisionObserver {
    /// Does nothing.
    public func cacheHit(_ event: GroupDecisionEvent.CacheHit) {}
    /// Does nothing.
    public func cacheMiss(_ event: GroupDecisionEvent.CacheMiss) {}
    /// Does nothing.
    public func staleServed(_ event: GroupDecisionEvent.StaleServed) {}
    /// Does nothing.
    public func fetchStarted(_ event: GroupDecisionEvent.FetchStarted) {}
    /// Does nothing.
    public func fetchFinished(_ event: GroupDecisionEvent.FetchFinished) {}
    /// Does nothing.
    public func rateLimited(_ event: GroupDecisionEvent.RateLimited) {}
    /// Does nothing.
    public func budgetExhausted(_ event: GroupDecisionEvent.BudgetExhausted) {}
    /// Does nothing.
    public func sharedCacheFailed(_ event: GroupDecisionEvent.SharedCacheFailure) {}
    /// Does nothing.
    public func sharedCacheRecovered(_ event: GroupDecisionEvent.SharedCacheRecovery) {}
    /// Does nothing.
    public func invalidated(_ event: GroupDecisionEvent.Invalidation) {}
    /// Does nothing.
    public func policyReloaded(_ event: GroupDecisionEvent.PolicyReload) {}
    /// Does nothing.
    public func policyReloadFailed(_ event: GroupDecisionEvent.PolicyReloadFailure) {}
    /// Does nothing.
    public func decisionRecorded(_ record: DecisionLogRecord) {}
}

/// The observer a service has when it is given none: it hears everything and says nothing.
struct SilentObserver: GroupDecisionObserver {}
