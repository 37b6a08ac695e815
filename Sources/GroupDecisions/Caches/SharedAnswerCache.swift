public import AppStoreGroups
public import GroupPolicy

/// Apple's answers per customer, kept for the fleet, with a write that an invalidation made since
/// the fetch began refuses: the first concern of a ``SharedGroupsCache``.
///
/// Every key is scoped by the environment (sandbox and production never share an answer).
public protocol SharedAnswerCache: Sendable {
    /// The answer kept for a customer, or `nil` when there is none or it has expired.
    ///
    /// - Parameters:
    ///   - customerID: The id the customer's decisions are asked with (any of their transaction
    ///     ids; use the same one everywhere).
    ///   - environment: The environment the answer stands for.
    /// - Returns: The answer, or `nil`.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func answer(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> CachedGroupsAnswer?

    /// How many invalidations the customer, and every customer, have seen: read before a fetch
    /// and given back to ``setAnswer(_:)`` in an ``AnswerWrite``.
    ///
    /// - Parameters:
    ///   - customerID: The customer about to be fetched.
    ///   - environment: The environment of the fetch.
    /// - Returns: The generation now.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func invalidationGeneration(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> InvalidationGeneration

    /// Keeps the write's answer for the customer for its time to live, replacing any other, only if
    /// no invalidation (of this customer, of all, or of one of the answer's groups) happened since
    /// its generation was read: checked and written in one atomic step, so an invalidation made by
    /// any process while the answer was being fetched wins.
    ///
    /// The answer is listed under each of its groups for ``SharedInvalidations/invalidate(groupID:)`` for as long as it
    /// is kept.
    ///
    /// - Parameter write: The answer, the customer, the environment, the time to live, the groups
    ///   and the generation read before the fetch began.
    /// - Returns: Whether the answer was kept (`false`: an invalidation came after the generation).
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func setAnswer(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> Bool
}
