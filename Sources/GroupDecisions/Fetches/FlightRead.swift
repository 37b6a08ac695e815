import AppStoreGroups

/// What a flight read from the shared cache before it asked the source, handed to the keeper with
/// the answer: the stamp of the copies it keeps here, and the condition of its shared write.
struct FlightRead: Sendable {
    /// The invalidation count every copy the flight keeps here carries.
    ///
    /// The count this process had read when the flight's read or fetch began, or read with the
    /// shared cache's answer (see ``InvalidationWatch``); `nil` before any reading, or without a
    /// shared cache.
    var stamp: UInt64? = nil
    /// The customer's invalidation generation read before asking the source.
    ///
    /// The shared cache keeps the answer only if no process invalidated the customer (or a group
    /// the answer holds) since; `nil`: the answer is written nowhere there.
    var generation: InvalidationGeneration? = nil
}
