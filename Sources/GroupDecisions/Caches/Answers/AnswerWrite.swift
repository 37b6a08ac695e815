import AppStoreGroups
public import GroupPolicy

/// An answer for a ``SharedGroupsCache`` to keep, with what decides whether it still may be: the
/// invalidation generation read before the fetch began, and the groups the answer holds.
///
/// A ``GroupDecisionService`` makes one per answer it fetched and hands it to
/// ``SharedAnswerCache/setAnswer(_:)`` or ``SharedFetchLock/setAnswer(_:releasingFetchLock:)``;
/// a store keeps ``answer`` only when no invalidation of the customer, of everyone or of one of
/// ``groupIDs`` came after ``generation``.
public struct AnswerWrite: Sendable {
    /// Apple's answer and when it was fetched.
    public var answer: CachedGroupsAnswer
    /// The id the customer's decisions are asked with (any of their transaction ids; the same one
    /// everywhere).
    public var customerID: String
    /// The environment the answer stands for.
    public var environment: StoreEnvironment
    /// How long the store keeps the answer; positive.
    public var timeToLive: Duration
    /// The ids of the groups the answer holds: the answer is refused when one of them was
    /// invalidated since ``generation`` was read, and is listed under each of them for
    /// ``SharedInvalidations/invalidate(groupID:)`` for as long as it is kept.
    public var groupIDs: [String]
    /// What ``SharedAnswerCache/invalidationGeneration(anyTransactionID:in:)`` answered before the
    /// fetch began.
    public var generation: InvalidationGeneration

    /// Creates a write.
    ///
    /// - Parameters:
    ///   - answer: Apple's answer and when it was fetched.
    ///   - customerID: The id the customer's decisions are asked with.
    ///   - environment: The environment the answer stands for.
    ///   - timeToLive: How long the store keeps it; positive.
    ///   - groupIDs: The ids of the groups the answer holds.
    ///   - generation: The generation read before the fetch began.
    public init(
        _ answer: CachedGroupsAnswer,
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        timeToLive: Duration,
        groupIDs: [String],
        ifGeneration generation: InvalidationGeneration
    ) {
        self.answer = answer
        self.customerID = customerID
        self.environment = environment
        self.timeToLive = timeToLive
        self.groupIDs = groupIDs
        self.generation = generation
    }
}
