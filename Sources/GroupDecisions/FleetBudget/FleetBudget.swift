public import AppStoreGroups
public import GroupPolicy

/// One endpoint's request budget in one environment, as a ``SharedGroupsCache`` keeps it for the
/// fleet: a token bucket refilled at ``ratePerSecond`` up to ``burst`` tokens, starting with
/// ``initialTokens`` when the store holds none.
///
/// See ``SharedFleetBudget/takeBudgetToken(from:maximumWait:)``.
public struct FleetBudget: Sendable, Hashable {
    /// The endpoint the requests go to.
    public var endpoint: GroupsEndpoint
    /// The environment they go to (Apple limits each separately).
    public var environment: StoreEnvironment
    /// Tokens added a second: the fleet's rate; positive.
    public var ratePerSecond: Double
    /// The most tokens banked; at least 1.
    public var burst: Double
    /// The tokens a bucket the store does not hold starts with: a new budget, or one the store lost
    /// (a flush, a restart without persistence, an eviction); from 0 to ``burst``.
    ///
    /// A lost bucket forgets the tokens reserved from it by callers still waiting to send, at most
    /// the rate times the longest wait: starting the new bucket full would let those callers and
    /// a whole burst through together. The decision service starts it with the burst less those
    /// reservations, so a lost bucket costs the fleet at most one burst beyond its budget (see the
    /// DocC article "Serving decisions at fleet scale", section "A store that loses its keys").
    public var initialTokens: Double

    /// Creates a budget.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint the requests go to.
    ///   - environment: The environment they go to.
    ///   - ratePerSecond: Tokens added a second; positive.
    ///   - burst: The most tokens banked; at least 1.
    ///   - initialTokens: The tokens a bucket the store does not hold starts with, from 0 to
    ///     `burst`. Default (`nil`): `burst`, a full bucket.
    public init(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment,
        ratePerSecond: Double,
        burst: Double,
        initialTokens: Double? = nil
    ) {
        self.endpoint = endpoint
        self.environment = environment
        self.ratePerSecond = ratePerSecond
        self.burst = burst
        self.initialTokens = initialTokens ?? burst
    }
}
