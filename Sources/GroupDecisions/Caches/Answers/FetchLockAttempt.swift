import AppStoreGroups

/// What a shared cache answers when asked for a customer's fetch lock together with what a fetch
/// under it needs: whether the lock was taken, the answer kept meanwhile, and the invalidation
/// generation to write the fetched answer with.
///
/// See ``SharedFetchLock/acquireFetchLockAndRead(anyTransactionID:in:owner:timeToLive:)``.
public struct FetchLockAttempt: Sendable, Hashable {
    /// Whether the caller now holds the customer's fetch lock.
    public var acquired: Bool
    /// The answer kept for the customer when the lock was asked for (another process may have
    /// stored one since the caller last read), or `nil` when there is none, it has expired, or the
    /// cache did not read it.
    public var answer: CachedGroupsAnswer?
    /// The customer's invalidation generation when the lock was asked for, or `nil` when the cache
    /// did not read it (the service then reads it with
    /// ``SharedAnswerCache/invalidationGeneration(anyTransactionID:in:)`` before it fetches).
    public var generation: InvalidationGeneration?

    /// Creates an attempt's outcome.
    ///
    /// - Parameters:
    ///   - acquired: Whether the caller now holds the lock.
    ///   - answer: The answer kept for the customer, or `nil`.
    ///   - generation: The customer's invalidation generation, or `nil` when not read.
    public init(acquired: Bool, answer: CachedGroupsAnswer?, generation: InvalidationGeneration?) {
        self.acquired = acquired
        self.answer = answer
        self.generation = generation
    }
}
