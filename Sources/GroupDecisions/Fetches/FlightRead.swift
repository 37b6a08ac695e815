/// What a flight read from the shared cache before it asked the source, handed to the keeper with
/// the answer: the stamp of the copies it keeps here, and the condition of its shared write.
struct FlightRead: Sendable {
    /// The invalidation count the flight's copies carry (see ``InvalidationWatch``): read before
    /// the flight's read or fetch began, or with the shared cache's answer.
    var stamp: UInt64? = nil
    /// The customer's invalidation generation read before asking the source, which the shared
    /// cache's write requires; `nil`: the answer is written nowhere there.
    var generation: InvalidationGeneration? = nil
}
