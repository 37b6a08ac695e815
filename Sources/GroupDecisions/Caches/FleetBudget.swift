public import AppStoreGroups
public import GroupPolicy

/// One endpoint's request budget in one environment, as a ``SharedGroupsCache`` keeps it for the
/// fleet: a token bucket refilled at ``ratePerSecond`` up to ``burst`` tokens.
///
/// See ``SharedRateLimitState/takeBudgetToken(from:maximumWait:)``.
public struct FleetBudget: Sendable, Hashable {
    /// The endpoint the requests go to.
    public var endpoint: GroupsEndpoint
    /// The environment they go to (Apple limits each separately).
    public var environment: StoreEnvironment
    /// Tokens added a second: the fleet's rate; positive.
    public var ratePerSecond: Double
    /// The most tokens banked; at least 1.
    public var burst: Double

    /// Creates a budget.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint the requests go to.
    ///   - environment: The environment they go to.
    ///   - ratePerSecond: Tokens added a second; positive.
    ///   - burst: The most tokens banked; at least 1.
    public init(_ endpoint: GroupsEndpoint, in environment: StoreEnvironment, ratePerSecond: Double, burst: Double) {
        self.endpoint = endpoint
        self.environment = environment
        self.ratePerSecond = ratePerSecond
        self.burst = burst
    }
}
