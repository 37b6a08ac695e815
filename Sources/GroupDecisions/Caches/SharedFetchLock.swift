public import AppStoreGroups
public import GroupPolicy

/// A short lock per customer, so that one process of the fleet fetches a customer while the others
/// wait for its answer: the second concern of a ``SharedGroupsCache``.
///
/// A store across a network implements the two combined calls
/// (``acquireFetchLockAndRead(anyTransactionID:in:owner:timeToLive:)`` and
/// ``setAnswer(_:releasingFetchLock:)``) in one atomic round trip each; a store that cannot may
/// make them of several calls of its own, and must then release the lock when a later step fails.
public protocol SharedFetchLock: Sendable {
    /// Releases the customer's fetch lock if `owner` still holds it; does nothing otherwise.
    ///
    /// - Parameters:
    ///   - customerID: The customer whose lock to release.
    ///   - environment: The environment of the fetch.
    ///   - owner: The value the lock was taken with.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func releaseFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String
    ) async throws(AppStoreGroupsError)

    /// Takes the customer's fetch lock when nobody holds it, and reads, in the same step, the answer
    /// kept for the customer and their invalidation generation.
    ///
    /// The lock expires by itself after `timeToLive`, so a holder that dies blocks the others for
    /// at most that long; it is also reported taken when `owner` already holds it (a call sent
    /// again answers as the first did). The answer is the one
    /// ``SharedAnswerCache/answer(anyTransactionID:in:)`` would give, with the same checks; the
    /// generation, the one ``SharedAnswerCache/invalidationGeneration(anyTransactionID:in:)`` would
    /// give.
    /// Reading them in the same atomic step as the lock is what a store implementing it natively
    /// should do; an answer or generation read a moment earlier is as correct (an earlier
    /// generation only refuses more writes).
    ///
    /// - Parameters:
    ///   - customerID: The customer about to be fetched.
    ///   - environment: The environment of the fetch.
    ///   - owner: A value unique to this attempt, needed to release the lock.
    ///   - timeToLive: When the lock expires if it is not released; positive.
    /// - Returns: Whether the lock was taken, the answer kept, and the generation.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func acquireFetchLockAndRead(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> FetchLockAttempt

    /// Keeps an answer as ``SharedAnswerCache/setAnswer(_:)`` does (only if no invalidation came since the write's
    /// generation), and releases the customer's fetch lock if `owner` still holds it, whether the
    /// answer was kept or refused: one round trip where that call and
    /// ``releaseFetchLock(anyTransactionID:in:owner:)`` take two.
    ///
    /// - Parameters:
    ///   - write: The answer and what decides whether it may be kept (see ``SharedAnswerCache/setAnswer(_:)``).
    ///   - owner: The value the fetch lock was taken with.
    /// - Returns: Whether the answer was kept (`false`: an invalidation came after the generation).
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the store cannot answer.
    func setAnswer(_ write: AnswerWrite, releasingFetchLock owner: String) async throws(AppStoreGroupsError) -> Bool
}
