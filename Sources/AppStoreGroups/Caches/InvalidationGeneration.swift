/// How many invalidations a shared cache has seen for one customer, and for every customer, when a
/// fetch began: the proof a writer gives that its answer does not predate an invalidation.
///
/// A ``GroupDecisionService`` reads the generation before it asks Apple and writes the answer with
/// ``SharedGroupsCache/setAnswer(_:anyTransactionID:in:timeToLive:ifGeneration:)``, which keeps it
/// only when neither count has moved since: an invalidation made by any process while the fetch
/// was under way wins, and the answer (fetched before it) is kept nowhere.
public struct InvalidationGeneration: Sendable, Hashable {
    /// The invalidations of this customer in this environment.
    public var customer: UInt64
    /// The invalidations of every customer (``SharedGroupsCache/invalidateAll()``).
    public var all: UInt64

    /// Creates a generation.
    ///
    /// - Parameters:
    ///   - customer: The invalidations of the customer in the environment.
    ///   - all: The invalidations of every customer.
    public init(customer: UInt64, all: UInt64) {
        self.customer = customer
        self.all = all
    }
}
