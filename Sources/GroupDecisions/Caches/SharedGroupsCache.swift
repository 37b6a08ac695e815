/// Where a ``GroupDecisionService`` keeps what several processes must share: Apple's answers per
/// customer, a short lock per customer so one process fetches while the others wait, and the
/// instant before which no request may go to an endpoint after a 429.
///
/// `InMemoryGroupsCache` serves one process; `RedisGroupsCache` serves a fleet. Every key is
/// scoped by the environment (sandbox and production never share an answer), and a store for
/// several apps scopes by app as well (`RedisGroupsCache` takes a key prefix).
///
/// Implementations must be safe to call from any number of tasks, and must bound the time of every
/// call: the service treats an error as "the cache is unavailable" and carries on with its
/// in-process cache (sending Apple nothing beyond the budget the cache granted), never granting
/// anything because of it; a cache whose calls succeed
/// but are consistently slow is left alone the same way (see
/// ``SharedCacheHealth/slowCallThreshold``). Error messages may name
/// keys: the service replaces a customer id in them before they reach its observer or its callers.
///
/// Every call of one decision waits for the one before, so over a network each costs a round
/// trip. A decision this process has not cached reads the answer
/// (``SharedAnswerCache/answer(anyTransactionID:in:)``); when there is none fresh, it asks for the fetch lock with
/// the answer and generation in one call
/// (``SharedFetchLock/acquireFetchLockAndRead(anyTransactionID:in:owner:timeToLive:)``), then, once the source has
/// answered, writes the answer and releases the lock in one call
/// (``SharedFetchLock/setAnswer(_:releasingFetchLock:)``), besides the rate-limit gate's calls
/// (``SharedRateLimitState/rateLimitedUntil(_:in:)`` and ``SharedFleetBudget/takeBudgetToken(from:maximumWait:)``).
/// A store across a network should implement those two combined requirements natively, each in one
/// atomic round trip.
///
/// The requirements come in five protocols, one per concern, and a conformer implements all of
/// them (none has a default implementation): ``SharedAnswerCache`` (answers, and the write an
/// invalidation refuses), ``SharedFetchLock`` (one fetch per customer across the fleet),
/// ``SharedRateLimitState`` (the `Retry-After` instant), ``SharedFleetBudget`` (the fleet's budget)
/// and ``SharedInvalidations`` (forgetting answers, and the count that tells a process its copies
/// are still good). A store that keeps only some conforms to those, and the service takes them
/// with ``SharedCaches``. See the article "Implementing a shared cache".
public protocol SharedGroupsCache:
    SharedAnswerCache, SharedFetchLock, SharedRateLimitState, SharedFleetBudget, SharedInvalidations
{}
