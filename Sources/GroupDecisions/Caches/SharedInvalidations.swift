public import AppStoreGroups
public import GroupPolicy

/// Forgetting answers the app knows are out of date, and counting every invalidation so that each
/// process knows when the copies it holds may still be served: the fourth concern of a
/// ``SharedGroupsCache``.
public protocol SharedInvalidations: Sendable {
    /// Forgets the answers kept for a customer, in every environment, and counts an invalidation
    /// of the customer in each (a write with an earlier generation is refused from then on).
    ///
    /// - Parameter customerID: The id the customer's decisions are asked with.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func invalidate(anyTransactionID customerID: String) async throws(AppStoreGroupsError)

    /// Forgets the answers of every customer whose kept answer holds the group, in every
    /// environment, and counts an invalidation of the group first (an answer holding it, fetched
    /// before, is refused from then on).
    ///
    /// - Parameter groupID: The group's id, as Apple's answers give it.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func invalidate(groupID: String) async throws(AppStoreGroupsError)

    /// Forgets every answer kept (locks and rate-limit instants stay), and counts an invalidation
    /// of every customer first (a write with an earlier generation is refused from then on).
    ///
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func invalidateAll() async throws(AppStoreGroupsError)

    /// How many invalidations (of a customer, a group or everyone) the store has seen, or `nil`
    /// when it does not count them.
    ///
    /// Every invalidation adds one, in the same atomic step that forgets the answers (for
    /// ``invalidateAll()``, once every answer has gone), so a process that reads a count that has
    /// not moved knows that no answer it read since its last reading was invalidated: the decision
    /// service serves its own copies only while the count it read less than
    /// ``GroupDecisionService/Configuration/SharedCache/invalidationCheckInterval`` ago is unchanged.
    ///
    /// Counts are compared for equality only. A store that can lose the count while the processes
    /// live on (a restart without persistence) starts a new count at a random base rather than 0,
    /// so that counting again cannot come back to a value a process remembers, as
    /// `RedisGroupsCache` does.
    ///
    /// - Returns: The count, or `nil` when the store keeps none.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func invalidationCount() async throws(AppStoreGroupsError) -> UInt64?

    /// The answer kept for a customer and the store's invalidation count, read in one atomic step:
    /// one round trip where ``invalidationCount()`` and ``SharedAnswerCache/answer(anyTransactionID:in:)`` take two.
    ///
    /// - Parameters:
    ///   - customerID: The id the customer's decisions are asked with.
    ///   - environment: The environment the answer stands for.
    /// - Returns: The answer (or `nil`), and the count (or `nil` when the store keeps none).
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func answerAndInvalidationCount(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> (answer: CachedGroupsAnswer?, invalidationCount: UInt64?)
}
