public import AppStoreGroups

/// The fleet's request budget: one token bucket per endpoint and environment, kept in the store on
/// the store's clock, the fifth concern of a ``SharedGroupsCache``.
///
/// A store that cannot take and refill a bucket in one atomic step does not conform: give the
/// service its other concerns with ``SharedCaches`` and each process keeps its own budget.
public protocol SharedFleetBudget: Sendable {
    /// Takes one token from the fleet's request budget for the endpoint in the environment, a
    /// token bucket kept in the store on the store's clock: the budget's rate of tokens a second,
    /// at most its burst banked, a new bucket starting full.
    ///
    /// When no token is banked the next one is reserved (the balance goes below zero) if it is due
    /// within `maximumWait`; otherwise nothing is taken. Taking and refilling are one atomic step,
    /// so every process sharing the store shares one budget.
    ///
    /// - Parameters:
    ///   - budget: The endpoint, the environment, and the fleet's rate and burst.
    ///   - maximumWait: The longest the caller would wait for a reserved token.
    /// - Returns: Whether a token was taken, and the wait.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func takeBudgetToken(
        from budget: FleetBudget,
        maximumWait: Duration
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken

    /// Takes one token from the fleet's request budget for a refresh: only when one is banked now
    /// and at least `reserve` tokens stay banked after, so that customers with no answer keep
    /// the reserve; never reserves a token ahead.
    ///
    /// The bucket is the one ``takeBudgetToken(from:maximumWait:)`` takes from, in the same atomic
    /// step on the store's clock.
    ///
    /// - Parameters:
    ///   - budget: The endpoint, the environment, and the fleet's rate and burst.
    ///   - reserve: The tokens that must stay banked after this one is taken; at least 0 and less
    ///     than the burst.
    /// - Returns: ``FleetBudgetToken/taken(wait:)`` with no wait, or
    ///   ``FleetBudgetToken/notTaken(wait:)`` with the wait until one could be.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func takeBudgetToken(
        from budget: FleetBudget,
        keeping reserve: Double
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken
}
