public import AppStoreGroups
public import Foundation
public import GroupPolicy

/// The instant before which an endpoint may not be asked after a 429, shared by the fleet: the
/// third concern of a ``SharedGroupsCache``.
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
}
