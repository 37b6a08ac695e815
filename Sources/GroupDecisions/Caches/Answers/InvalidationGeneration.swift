import AppStoreGroups

/// How many invalidations a shared cache has seen for one customer, and for every customer, when a
/// fetch began: the proof a writer gives that its answer does not predate an invalidation.
///
/// A ``GroupDecisionService`` reads the generation before it asks Apple and writes the answer with
/// ``SharedAnswerCache/setAnswer(_:)`` (in an ``AnswerWrite``), which keeps it only when no count
/// has moved since (for groups: no group the answer holds was invalidated since): an invalidation
/// made by any process while the fetch was under way wins, and the answer (fetched before it) is
/// kept nowhere.
public struct InvalidationGeneration: Sendable, Hashable {
    /// The invalidations of this customer in this environment.
    public var customer: UInt64
    /// The invalidations of every customer (``SharedInvalidations/invalidateAll()``).
    public var all: UInt64
    /// The invalidations of any group (``SharedInvalidations/invalidate(groupID:)``), counted for the
    /// whole store: an answer holding a group invalidated after this count is refused.
    public var groups: UInt64

    /// Creates a generation.
    ///
    /// - Parameters:
    ///   - customer: The invalidations of the customer in the environment.
    ///   - all: The invalidations of every customer.
    ///   - groups: The invalidations of any group. Default 0.
    public init(customer: UInt64, all: UInt64, groups: UInt64 = 0) {
        self.customer = customer
        self.all = all
        self.groups = groups
    }
}
