/// The concerns of a shared cache a ``GroupDecisionService`` uses, each on its own: a store gives
/// those it keeps, and the service does without the others.
///
/// Built from one store that keeps them all (``init(_:)``), or piecewise. Answers, the fetch lock
/// and invalidations must then be one object (an invalidation must reach the store that holds the
/// answers and refuses their writes): when they are not, or are not class instances, no answer is
/// shared, as without ``answers``. What the service does without each is in the DocC article
/// "Implementing a shared cache", section "Concerns a store may leave out":
///
/// - Without ``answers`` or ``invalidations`` no answer is shared (an answer the fleet could not be
///   told to forget is not kept for it): each process fetches and keeps its own, as without a
///   shared cache, and the fetch lock is not used.
/// - Without ``fetchLock``, a process that finds no fresh shared answer fetches it itself and
///   writes it under the generation it read: no single flight across the fleet.
/// - Without ``rateLimits``, a 429 holds only the process that received it.
/// - Without ``fleetBudget``, each process keeps its own budget, the whole configured rate.
public struct SharedCaches: Sendable {
    /// Apple's answers per customer.
    public var answers: (any SharedAnswerCache)? {
        didSet { fromOneStore = false }
    }
    /// One fetch per customer across the fleet.
    public var fetchLock: (any SharedFetchLock)? {
        didSet { fromOneStore = false }
    }
    /// The `Retry-After` instants of 429s.
    public var rateLimits: (any SharedRateLimitState)?
    /// The fleet's request budget.
    public var fleetBudget: (any SharedFleetBudget)?
    /// Forgetting answers, and the count that tells a process its copies are still good.
    public var invalidations: (any SharedInvalidations)? {
        didSet { fromOneStore = false }
    }

    /// The concerns given; none by default (this process alone).
    public init(
        answers: (any SharedAnswerCache)? = nil,
        fetchLock: (any SharedFetchLock)? = nil,
        rateLimits: (any SharedRateLimitState)? = nil,
        fleetBudget: (any SharedFleetBudget)? = nil,
        invalidations: (any SharedInvalidations)? = nil
    ) {
        self.answers = answers
        self.fetchLock = fetchLock
        self.rateLimits = rateLimits
        self.fleetBudget = fleetBudget
        self.invalidations = invalidations
    }

    /// Whether answers, the fetch lock and invalidations came from one store through ``init(_:)``.
    private var fromOneStore = false

    /// Every concern from one store.
    public init(_ store: some SharedGroupsCache) {
        self.init(answers: store, fetchLock: store, rateLimits: store, fleetBudget: store, invalidations: store)
        fromOneStore = true
    }

    /// Whether answers, the fetch lock (when given) and invalidations are one object.
    private var answersAreOneStore: Bool {
        if fromOneStore { return true }
        guard let answers, let invalidations, type(of: answers) is AnyClass else { return false }
        let store = ObjectIdentifier(answers as AnyObject)
        guard ObjectIdentifier(invalidations as AnyObject) == store else { return false }
        return fetchLock.map { ObjectIdentifier($0 as AnyObject) == store } ?? true
    }

    /// Whether no concern is given: the service serves this process alone.
    var isEmpty: Bool {
        answers == nil && fetchLock == nil && rateLimits == nil && fleetBudget == nil && invalidations == nil
    }

    /// The concerns the service uses: answers, the fetch lock and invalidations only together, and
    /// only from one store (fail closed: an invalidation that reached another store than the
    /// answers' would leave a revoked answer served).
    var used: SharedCaches {
        guard answers != nil, invalidations != nil, answersAreOneStore else {
            return SharedCaches(rateLimits: rateLimits, fleetBudget: fleetBudget)
        }
        return self
    }
}
