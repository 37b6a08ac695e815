package import AppStoreGroups
package import GroupDecisions
package import GroupPolicy

/// A store whose fetch lock is taken by a single call, which can therefore make the combined
/// fetch-lock calls of single ones, as a store that cannot make them atomically does.
package protocol SingleCallFetchLock: SharedAnswerCache, SharedFetchLock {
    /// Takes the customer's fetch lock when nobody holds it (reported not taken to its own owner).
    func acquireFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> Bool
}

/// The combined fetch-lock calls made of the single ones: correct, one round trip per single call,
/// the lock released when a later step fails.
extension SingleCallFetchLock {
    /// Takes the lock with `acquireFetchLock(anyTransactionID:in:owner:timeToLive:)`;
    /// when it is taken, reads the answer with `answer(anyTransactionID:in:)` and
    /// the generation with `invalidationGeneration(anyTransactionID:in:)` (three
    /// calls in a row; one when the lock is not taken, with neither read).
    ///
    /// A failed read after the lock was taken releases the lock before the error is thrown.
    ///
    /// - Parameters:
    ///   - customerID: The customer about to be fetched.
    ///   - environment: The environment of the fetch.
    ///   - owner: A value unique to this attempt.
    ///   - timeToLive: When the lock expires if it is not released.
    /// - Returns: Whether the lock was taken and, when it was, the answer and the generation.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when a call fails.
    package func acquireFetchLockAndReadInSteps(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> FetchLockAttempt {
        let acquired = try await acquireFetchLock(
            anyTransactionID: customerID,
            in: environment,
            owner: owner,
            timeToLive: timeToLive
        )
        guard acquired else { return FetchLockAttempt(acquired: false, answer: nil, generation: nil) }
        do {
            let answer = try await answer(anyTransactionID: customerID, in: environment)
            let generation = try await invalidationGeneration(anyTransactionID: customerID, in: environment)
            return FetchLockAttempt(acquired: true, answer: answer, generation: generation)
        } catch {
            // The caller learns nothing of the lock from an error: it must not stay held.
            try? await releaseFetchLock(anyTransactionID: customerID, in: environment, owner: owner)
            throw error
        }
    }

    /// Writes with `setAnswer(_:)`, then releases the lock with
    /// `releaseFetchLock(anyTransactionID:in:owner:)` (two calls in a row),
    /// releasing it also when the write fails.
    ///
    /// - Parameters:
    ///   - write: The answer and what decides whether it may be kept.
    ///   - owner: The value the fetch lock was taken with.
    /// - Returns: Whether the answer was kept.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the write or the release fails
    ///   (the write's error when both do).
    package func setAnswerInSteps(
        _ write: AnswerWrite,
        releasingFetchLock owner: String
    ) async throws(AppStoreGroupsError) -> Bool {
        let kept: Bool
        do {
            kept = try await setAnswer(write)
        } catch {
            try? await releaseFetchLock(anyTransactionID: write.customerID, in: write.environment, owner: owner)
            throw error
        }
        try await releaseFetchLock(anyTransactionID: write.customerID, in: write.environment, owner: owner)
        return kept
    }
}
