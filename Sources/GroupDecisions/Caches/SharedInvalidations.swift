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

    /// The store's invalidation count, a value that moves with every invalidation (of a customer, a
    /// group or everyone), or `nil` when the store keeps none.
    ///
    /// Counts are compared for equality only. Every invalidation sets the count, in the same atomic
    /// step that forgets the answers (for ``invalidateAll()``, once every answer has gone), to a
    /// value the store never gave before, so a process that reads the count it read before knows
    /// that no invalidation came since: the decision service serves its own copies only while a
    /// reading of the count begun less than
    /// ``GroupDecisionService/Configuration/SharedCache/invalidationCheckInterval`` ago gives the
    /// count they were stamped with.
    ///
    /// A store that can lose the count while the processes live on (a restart without persistence,
    /// a flush, a failover to a replica that lagged behind) must not give a value a process
    /// remembers: a read that finds the count missing creates it at a fresh random value in the
    /// same atomic step and answers that, and an invalidation sets a fresh random value rather
    /// than adding one, as `RedisGroupsCache` does. A store that cannot lose it may count up, as
    /// `InMemoryGroupsCache` does.
    ///
    /// - Returns: The count, or `nil` when the store keeps none.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func invalidationCount() async throws(AppStoreGroupsError) -> UInt64?

    /// The answer kept for a customer and the store's invalidation count, read in one atomic step:
    /// one round trip where ``invalidationCount()`` and ``SharedAnswerCache/answer(anyTransactionID:in:)`` take two.
    ///
    /// The count follows the rules of ``invalidationCount()``: a store that can lose it creates a
    /// missing one at a fresh random value in the same step.
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
