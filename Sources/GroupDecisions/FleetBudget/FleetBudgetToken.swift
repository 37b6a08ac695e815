import AppStoreGroups

/// What a shared cache answers when asked for a token of the fleet's request budget for one
/// endpoint in one environment.
///
/// See ``SharedFleetBudget/takeBudgetToken(from:maximumWait:)``.
public enum FleetBudgetToken: Sendable, Hashable {
    /// A token is taken: send the request after `wait` (zero: at once).
    ///
    /// A caller that found none banked reserves the next one and waits for it, so waiting callers
    /// across the fleet leave in order and never above the rate.
    case taken(wait: Duration)
    /// No token is taken: the next one is due after `wait`, longer than the caller may wait.
    case notTaken(wait: Duration)
}
