public import AppStoreGroups
public import Foundation
public import GroupPolicy

/// What the fleet shares to stay within Apple's rate limits: the instant before which an endpoint
/// may not be asked after a 429, and, when ``keepsFleetBudget`` is `true`, one token bucket per
/// endpoint and environment: the third concern of a ``SharedGroupsCache``.
public protocol SharedRateLimitState: Sendable {
    /// The instant before which no request may go to the endpoint, or `nil` when none is set or it
    /// has passed.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - environment: The environment (Apple limits each separately).
    /// - Returns: The instant, or `nil`.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func rateLimitedUntil(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> Date?

    /// Records that no request may go to the endpoint before `instant`, unless a later instant is
    /// already recorded.
    ///
    /// - Parameters:
    ///   - instant: The `Retry-After` instant of a 429.
    ///   - endpoint: The endpoint that answered 429.
    ///   - environment: The environment it answered for.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot keep it.
    func setRateLimitedUntil(
        _ instant: Date,
        for endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError)

    /// Whether this cache keeps the fleet's request budget (``takeBudgetToken(from:maximumWait:)``).
    ///
    /// When `false` the service keeps a budget per process, the whole configured rate, and never
    /// asks for tokens: a store that cannot take and refill a bucket atomically answers `false`,
    /// and its two `takeBudgetToken` calls answer ``FleetBudgetToken/notSupported``.
    var keepsFleetBudget: Bool { get }

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
