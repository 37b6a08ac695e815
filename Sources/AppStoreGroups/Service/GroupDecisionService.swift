public import GroupPolicy

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Decisions for an app server: a customer's transaction id, verified entitlements and
/// environment in, their Decision out, through a cache, a `PolicyStore` and the client.
///
/// Hold one per process and call ``decision(forCustomer:entitlements:environment:)`` per request.
/// It owns:
///
/// - **Caching**: Apple's answers (not decisions, so a policy reload applies at once) in a
///   byte-bounded, least-recently-used cache in this process, and optionally in a shared
///   ``SharedGroupsCache`` such as ``RedisGroupsCache`` for a fleet.
/// - **Single flight**: concurrent calls for one customer share one request to Apple; with a
///   shared store, processes take a short lock and the others poll for the holder's answer.
/// - **Freshness**: answers are fresh for ``Configuration/timeToLive``; when a fetch fails, an
///   answer within ``Configuration/staleIfError`` after that is served marked stale; otherwise the
///   call fails closed with the fetch's ``AppStoreGroupsError``. Nothing is ever granted from a
///   failed fetch.
/// - **Negative answers**: `TransactionIdNotFoundError` is remembered for
///   ``Configuration/negativeTimeToLive``, and thrown again from the cache.
/// - **One rate budget**: a token bucket per endpoint and environment, and after a 429 no request
///   to that endpoint leaves any process sharing the store before the `Retry-After` instant.
///
/// When the shared store fails, the service carries on with its own cache and budget, logs one
/// line a minute at most, and keeps failing closed where it would have.
///
/// The client's own retries still apply to each fetch; give it a ``RetryPolicy`` whose
/// ``RetryPolicy/maximumRateLimitWait`` is zero so that a 429 reaches the service (and the fleet)
/// at once rather than after the client's own wait.
public final class GroupDecisionService: Sendable {
    /// The policies decisions are made with.
    public let policies: PolicyStore
    /// How fresh answers must be, how long callers wait, how fast requests may go.
    public let configuration: Configuration

    /// Fetches Get Customer Groups for one environment: the answer's bytes and its decoding.
    package typealias Fetch =
        @Sendable (_ customerID: String) async throws(AppStoreGroupsError) -> (
            body: [UInt8], response: GetCustomerGroupsResponse
        )

    private let fetchers: [StoreEnvironment: Fetch]
    private let shared: (any SharedGroupsCache)?
    private let local: InMemoryGroupsCache
    private let timeSource: TimeSource
    private let log: @Sendable (String) -> Void
    private let decisionLog: DecisionLog?
    private let flights = Locked<[FlightKey: Flight]>([:])
    private let buckets = Locked<[BucketKey: TokenBucket]>([:])
    private let storeHealth = Locked(StoreHealth())
    /// ``Configuration/timeToLive`` and ``Configuration/negativeTimeToLive`` in seconds, converted
    /// once: a hit compares dates with them, and `Duration` arithmetic costs more than the rest of
    /// the check.
    private let timeToLiveSeconds: Double
    private let negativeTimeToLiveSeconds: Double

    private struct StoreHealth {
        /// When the last log line about the shared store was written.
        var lastComplaint: Date?
        /// Until when the shared store is skipped after a failure.
        var skipUntil: Date?
    }

    private struct FlightKey: Hashable {
        var environment: StoreEnvironment
        var customerID: String
    }

    private struct BucketKey: Hashable {
        var environment: StoreEnvironment
        var endpoint: GroupsEndpoint
    }

    /// One fetch in progress for a customer, and whether an invalidation overtook it.
    private struct Flight {
        var task: Task<Loaded, any Error>
        var ticket: FlightTicket
    }

    /// Marks a flight that an invalidation overtook: its answer predates the invalidation, so it
    /// answers the callers that were already waiting for it and is kept nowhere.
    private final class FlightTicket: Sendable {
        private let invalidated = Locked(false)

        var isInvalidated: Bool { invalidated.withLock { $0 } }

        func invalidate() { invalidated.withLock { $0 = true } }
    }

    /// The ticket of the flight the current task runs, read where answers are kept.
    @TaskLocal private static var currentTicket: FlightTicket?

    /// A customer's groups as a flight delivers them.
    private struct Loaded: Sendable {
        var answer: CachedGroupsAnswer
        var decoded: GetCustomerGroupsResponse
        var source: ServedDecision.Source
    }

    /// Creates a service.
    ///
    /// - Parameters:
    ///   - policies: The policies decisions are made with.
    ///   - clients: One client per environment served (by `storeEnvironment`); a call for an
    ///     environment without one fails with ``AppStoreGroupsError/Code/invalidArgument``.
    ///   - sharedCache: A store shared by the fleet, or `nil` for this process alone.
    ///   - configuration: Freshness, waits and budgets. Default: ``Configuration/init()``.
    ///   - timeSource: The wall clock and sleep. Default ``TimeSource/system``.
    ///   - decisionLog: Receives one record per decision served or refused. Default: none.
    ///   - log: Receives one line when the shared store fails, at most once a minute. Default:
    ///     standard error.
    /// - Throws: ``AppStoreGroupsError/Code/invalidConfiguration`` for a configuration out of
    ///   range or two clients for one environment.
    public convenience init(
        policies: PolicyStore,
        clients: [AppStoreGroupsClient],
        sharedCache: (any SharedGroupsCache)? = nil,
        configuration: Configuration = Configuration(),
        timeSource: TimeSource = .system,
        decisionLog: DecisionLog? = nil,
        log: @escaping @Sendable (String) -> Void = GroupDecisionService.standardError
    ) throws(AppStoreGroupsError) {
        var byEnvironment: [StoreEnvironment: Fetch] = [:]
        for client in clients {
            let fetch: Fetch = { customerID throws(AppStoreGroupsError) in
                try await client.customerGroupsAnswer(anyTransactionID: customerID)
            }
            guard byEnvironment.updateValue(fetch, forKey: client.storeEnvironment) == nil else {
                throw AppStoreGroupsError(
                    code: .invalidConfiguration,
                    message: "two clients for the \(client.storeEnvironment) environment"
                )
            }
        }
        try self.init(
            policies: policies,
            fetchers: byEnvironment,
            sharedCache: sharedCache,
            configuration: configuration,
            timeSource: timeSource,
            decisionLog: decisionLog,
            log: log
        )
    }

    /// Creates a service whose fetches are functions, for the package's benchmark.
    package init(
        policies: PolicyStore,
        fetchers: [StoreEnvironment: Fetch],
        sharedCache: (any SharedGroupsCache)? = nil,
        configuration: Configuration = Configuration(),
        timeSource: TimeSource = .system,
        decisionLog: DecisionLog? = nil,
        log: @escaping @Sendable (String) -> Void = GroupDecisionService.standardError
    ) throws(AppStoreGroupsError) {
        if let problem = configuration.problem {
            throw AppStoreGroupsError(code: .invalidConfiguration, message: problem)
        }
        self.policies = policies
        self.fetchers = fetchers
        self.shared = sharedCache
        self.configuration = configuration
        self.timeSource = timeSource
        self.log = log
        self.decisionLog = decisionLog
        self.timeToLiveSeconds = configuration.timeToLive.seconds
        self.negativeTimeToLiveSeconds = configuration.negativeTimeToLive.seconds
        self.local = InMemoryGroupsCache(capacityBytes: configuration.capacityBytes, now: timeSource.now)
    }

    /// Writes a line to standard error.
    public static let standardError: @Sendable (String) -> Void = { line in
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// What this process's cache holds, in bytes (see ``InMemoryGroupsCache``).
    public var cachedBytes: Int { local.costBytes }

    // MARK: Decisions

    /// The customer's Decision under the policy serving now.
    ///
    /// - Parameters:
    ///   - customerID: Any of the customer's transaction ids (use the same one for a customer
    ///     everywhere, and for ``invalidate(customer:)``): 1 to 128 characters of
    ///     `A-Z a-z 0-9 _ -`.
    ///   - entitlements: The product ids your backend verified from the customer's transactions.
    ///   - environment: Where the transactions come from.
    /// - Returns: The Decision with where its groups came from and when they were fetched.
    /// - Throws: ``AppStoreGroupsError``: the fetch's own error when fetching failed and no answer
    ///   within the stale-if-error window was left (nothing granted);
    ///   ``AppStoreGroupsError/Code/transactionIDNotFound`` (also from the negative cache);
    ///   ``AppStoreGroupsError/Code/rateLimitExceeded`` without an HTTP status when the budget or
    ///   a `Retry-After` instant is further away than ``Configuration/maximumRateLimitWait``.
    public func decision(
        forCustomer customerID: String,
        entitlements: Set<String> = [],
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> ServedDecision {
        let loaded: Loaded
        do {
            // A hit is served without suspending: one clock read, one lookup under one lock.
            if let hit = try cached(forCustomer: customerID, in: environment) {
                loaded = hit
            } else {
                loaded = try await groups(forCustomer: customerID, in: environment)
            }
        } catch {
            if let decisionLog {
                decisionLog.record(
                    DecisionLogRecord(
                        time: timeSource.now(),
                        customerHash: decisionLog.customerHash(customerID),
                        environment: environment.rawValue,
                        policyRevision: policies.revision,
                        errorCode: error.code.description
                    )
                )
            }
            throw error
        }
        let context = EvaluationContext(environment: environment, entitlements: entitlements)
        let policy = policies.current
        var decision = policy.evaluate(loaded.decoded, in: context)
        decision.groupsSource = loaded.source
        decision.groupsFetchedAt = loaded.answer.fetchedAt
        decision.policyRevision = policy.revision
        let served = ServedDecision(
            decision: decision,
            source: loaded.source,
            fetchedAt: loaded.answer.fetchedAt,
            groups: loaded.decoded,
            policy: policy
        )
        if let decisionLog {
            decisionLog.record(
                DecisionLogRecord(
                    time: timeSource.now(),
                    customerHash: decisionLog.customerHash(customerID),
                    environment: environment.rawValue,
                    policyRevision: policy.revision,
                    source: served.source.name,
                    fetchedAt: served.fetchedAt,
                    capabilities: served.decision.capabilities.sorted()
                )
            )
        }
        return served
    }

    /// Forgets a customer's groups, here and in the shared store.
    ///
    /// Call it from your App Store Server Notifications handler for `SUBSCRIBED`, `DID_RENEW`,
    /// `EXPIRED`, `REFUND` (subtype `SEATS` included), `REVOKE` and `ASSIGNMENT_REVOKE`
    /// revocations, and when Get Group Members answers `GroupNotFoundError` for a group the
    /// customer was in.
    ///
    /// This process forgets at once whatever happens; the shared store is always tried, even while
    /// reads skip it after a failure, and a failure there is thrown: the other processes would keep
    /// the old answer for its time to live, so a notification handler must retry (answer Apple's
    /// notification with an error so that Apple sends it again).
    ///
    /// - Parameter customerID: The id the customer's decisions are asked with.
    /// - Throws: ``AppStoreGroupsError/Code/storeFailure`` when the shared store was not updated.
    public func invalidate(customer customerID: String) async throws(AppStoreGroupsError) {
        // Fetches already on their way bring answers older than this call: callers from now on
        // start their own, and those answers are not kept.
        flights.withLock { flights in
            for environment in StoreEnvironment.allCases {
                let key = FlightKey(environment: environment, customerID: customerID)
                flights.removeValue(forKey: key)?.ticket.invalidate()
            }
        }
        local.invalidateLocally(customer: customerID)
        guard let shared else { return }
        try await reportingStoreFailure { () throws(AppStoreGroupsError) in
            try await shared.invalidate(customer: customerID)
        }
    }

    /// Forgets every customer's groups, here and in the shared store.
    ///
    /// - Throws: ``AppStoreGroupsError/Code/storeFailure`` when the shared store was not updated
    ///   (this process has forgotten them all the same; see ``invalidate(customer:)``).
    public func invalidateAll() async throws(AppStoreGroupsError) {
        flights.withLock { flights in
            for flight in flights.values { flight.ticket.invalidate() }
            flights.removeAll()
        }
        local.invalidateAllLocally()
        guard let shared else { return }
        try await reportingStoreFailure { () throws(AppStoreGroupsError) in try await shared.invalidateAll() }
    }

    // MARK: Groups

    /// This process's fresh answer for the customer, or `nil`; throws a fresh negative answer.
    private func cached(
        forCustomer customerID: String,
        in environment: StoreEnvironment
    ) throws(AppStoreGroupsError) -> Loaded? {
        let now = timeSource.now()
        guard let (answer, decoded) = local.entry(forCustomer: customerID, in: environment, now: now) else {
            return nil
        }
        return try fresh(answer, decoded: decoded, now: now)
    }

    /// The customer's groups through one flight per customer: the shared store or Apple.
    private func groups(
        forCustomer customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> Loaded {
        let key = FlightKey(environment: environment, customerID: customerID)
        let (task, ticket, isLeader) = flights.withLock { flights in
            if let flight = flights[key] { return (flight.task, flight.ticket, false) }
            let ticket = FlightTicket()
            let task = Task { () async throws -> Loaded in
                try await Self.$currentTicket.withValue(ticket) {
                    try await self.load(customerID: customerID, environment: environment)
                }
            }
            flights[key] = Flight(task: task, ticket: ticket)
            return (task, ticket, true)
        }
        let result = await task.result
        // Only its own flight: an invalidation may have put a newer one in its place.
        if isLeader { flights.withLock { if $0[key]?.ticket === ticket { $0[key] = nil } } }
        switch result {
        case .success(let loaded):
            return loaded
        case .failure(let error as AppStoreGroupsError):
            throw error
        case .failure(let error):
            throw AppStoreGroupsError(code: .transportFailure, message: "the fetch failed: \(error)")
        }
    }

    /// The cached answer as a flight result when it is fresh; throws a fresh negative answer;
    /// `nil` when it is too old.
    private func fresh(
        _ answer: CachedGroupsAnswer,
        decoded: GetCustomerGroupsResponse?,
        now: Date
    ) throws(AppStoreGroupsError) -> Loaded? {
        switch answer.kind {
        case .notFound:
            guard now < answer.fetchedAt.addingTimeInterval(negativeTimeToLiveSeconds) else {
                return nil
            }
            throw Self.notFound(since: answer.fetchedAt)
        case .groups:
            guard now < answer.fetchedAt.addingTimeInterval(timeToLiveSeconds),
                let decoded = decoded ?? decode(answer)
            else { return nil }
            return Loaded(answer: answer, decoded: decoded, source: .cache)
        }
    }

    private func decode(_ answer: CachedGroupsAnswer) -> GetCustomerGroupsResponse? {
        try? GetCustomerGroupsResponse(jsonBytes: answer.body)
    }

    private static func notFound(since fetchedAt: Date) -> AppStoreGroupsError {
        AppStoreGroupsError(
            code: .transactionIDNotFound,
            message: "the App Store knows no such transaction (remembered since \(fetchedAt))",
            httpStatus: 404,
            apiErrorCode: 4_040_010
        )
    }

    /// One flight: the shared store's answer, or a fetch under the shared lock.
    private func load(customerID: String, environment: StoreEnvironment) async throws(AppStoreGroupsError) -> Loaded {
        var fallback = local.entry(forCustomer: customerID, in: environment)
        if let shared {
            if let answer = await withSharedStore({ () throws(AppStoreGroupsError) in
                try await shared.answer(forCustomer: customerID, in: environment)
            }) ?? nil {
                if let loaded = try adopt(answer, customerID: customerID, environment: environment) { return loaded }
                if answer.kind == .groups, fallback.map({ $0.answer.fetchedAt < answer.fetchedAt }) ?? true {
                    fallback = (answer, nil)
                }
            }
            let owner = UUID().uuidString
            let acquired = await withSharedStore { () throws(AppStoreGroupsError) in
                try await shared.acquireFetchLock(
                    forCustomer: customerID,
                    in: environment,
                    owner: owner,
                    timeToLive: configuration.fetchLockTimeToLive
                )
            }
            if acquired == true {
                let result: Result<Loaded, AppStoreGroupsError>
                do {
                    // Another process may have fetched, stored and released between the read above
                    // and this lock: its answer saves a request.
                    if let answer = await withSharedStore({ () throws(AppStoreGroupsError) in
                        try await shared.answer(forCustomer: customerID, in: environment)
                    }) ?? nil,
                        let loaded = try adopt(answer, customerID: customerID, environment: environment)
                    {
                        result = .success(loaded)
                    } else {
                        result = .success(
                            try await fetch(customerID: customerID, environment: environment, fallback: fallback)
                        )
                    }
                } catch {
                    result = .failure(error)
                }
                await withSharedStore { () throws(AppStoreGroupsError) in
                    try await shared.releaseFetchLock(forCustomer: customerID, in: environment, owner: owner)
                }
                return try result.get()
            }
            if acquired == false,
                let loaded = try await awaitHolder(customerID: customerID, environment: environment, store: shared)
            {
                return loaded
            }
        }
        return try await fetch(customerID: customerID, environment: environment, fallback: fallback)
    }

    /// A shared answer kept here too when fresh, as a flight result; throws a fresh negative one.
    private func adopt(
        _ answer: CachedGroupsAnswer,
        customerID: String,
        environment: StoreEnvironment
    ) throws(AppStoreGroupsError) -> Loaded? {
        let now = timeSource.now()
        do {
            guard let loaded = try fresh(answer, decoded: nil, now: now) else { return nil }
            keepLocally(answer, decoded: loaded.decoded, customerID: customerID, environment: environment, now: now)
            return loaded
        } catch {
            keepLocally(answer, decoded: nil, customerID: customerID, environment: environment, now: now)
            throw error
        }
    }

    /// Polls the shared store while another process holds the lock, up to the configured wait.
    private func awaitHolder(
        customerID: String,
        environment: StoreEnvironment,
        store: any SharedGroupsCache
    ) async throws(AppStoreGroupsError) -> Loaded? {
        // Measured on the clock, not as a sum of poll intervals: a slow store's own time (up to its
        // timeout per poll) counts too, so the wait stays the configured one. A millisecond of
        // slack absorbs the floating-point error of adding up poll intervals.
        let deadline = timeSource.now().addingTimeInterval(configuration.fetchLockWait.seconds)
        while deadline.timeIntervalSince(timeSource.now()) > 0.001 {
            do {
                try await timeSource.sleep(configuration.fetchLockPollInterval)
            } catch {
                throw AppStoreGroupsError(code: .cancelled, message: "cancelled while waiting for another fetch")
            }
            let answer = await withSharedStore { () throws(AppStoreGroupsError) in
                try await store.answer(forCustomer: customerID, in: environment)
            }
            guard let answer else { return nil }  // The store failed: fetch here.
            if let answer, let loaded = try adopt(answer, customerID: customerID, environment: environment) {
                return loaded
            }
        }
        return nil
    }

    /// Asks Apple, within the budget, and keeps the answer; on failure, serves a stale answer
    /// within the window or fails closed.
    private func fetch(
        customerID: String,
        environment: StoreEnvironment,
        fallback: (answer: CachedGroupsAnswer, decoded: GetCustomerGroupsResponse?)?
    ) async throws(AppStoreGroupsError) -> Loaded {
        guard let fetchGroups = fetchers[environment] else {
            throw AppStoreGroupsError(
                code: .invalidArgument,
                message: "no client is configured for the \(environment) environment"
            )
        }
        do {
            try await spendBudget(for: .customerGroups, in: environment)
            let (body, response) = try await fetchGroups(customerID)
            let now = Self.wholeMilliseconds(timeSource.now())
            let answer = CachedGroupsAnswer(kind: .groups, body: body, fetchedAt: now)
            await keep(answer, decoded: response, customerID: customerID, environment: environment, now: now)
            return Loaded(answer: answer, decoded: response, source: .live)
        } catch {
            if error.code == .transactionIDNotFound {
                let now = Self.wholeMilliseconds(timeSource.now())
                let answer = CachedGroupsAnswer(kind: .notFound, body: [], fetchedAt: now)
                await keep(answer, decoded: nil, customerID: customerID, environment: environment, now: now)
                throw error
            }
            if error.code == .rateLimitExceeded, error.httpStatus == 429 {
                await closeGate(
                    for: .customerGroups,
                    in: environment,
                    until: error.retryAfter ?? timeSource.now().addingTimeInterval(1)
                )
            }
            if error.code != .invalidArgument, error.code != .invalidTransactionID,
                let fallback, fallback.answer.kind == .groups,
                timeSource.now()
                    < fallback.answer.fetchedAt.addingTimeInterval(
                        configuration.timeToLive.seconds + configuration.staleIfError.seconds
                    ),
                let decoded = fallback.decoded ?? decode(fallback.answer)
            {
                return Loaded(answer: fallback.answer, decoded: decoded, source: .stale)
            }
            throw error
        }
    }

    /// The instant cut to whole milliseconds, the resolution a shared store keeps, so a fetch time
    /// reads the same from every process.
    private static func wholeMilliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }

    private func keepLocally(
        _ answer: CachedGroupsAnswer,
        decoded: GetCustomerGroupsResponse?,
        customerID: String,
        environment: StoreEnvironment,
        now: Date
    ) {
        let life = lifetime(of: answer)
        var left = answer.fetchedAt.addingTimeInterval(life.seconds).timeIntervalSince(now)
        // With a shared store, this process re-reads it often enough that another process's
        // invalidation reaches it within the bound.
        if shared != nil { left = min(left, configuration.localTimeToLive.seconds) }
        guard left > 0, Self.currentTicket?.isInvalidated != true else { return }
        local.set(
            answer,
            decoded: decoded,
            forCustomer: customerID,
            in: environment,
            timeToLive: .milliseconds(Int64((left * 1000).rounded(.down)))
        )
        // Set, then looked at again: an invalidation between the two has either removed the
        // answer itself or is seen here.
        if Self.currentTicket?.isInvalidated == true { local.invalidateLocally(customer: customerID) }
    }

    private func keep(
        _ answer: CachedGroupsAnswer,
        decoded: GetCustomerGroupsResponse?,
        customerID: String,
        environment: StoreEnvironment,
        now: Date
    ) async {
        keepLocally(answer, decoded: decoded, customerID: customerID, environment: environment, now: now)
        guard let shared else { return }
        let life = lifetime(of: answer)
        guard life > .zero, Self.currentTicket?.isInvalidated != true else { return }
        await withSharedStore { () throws(AppStoreGroupsError) in
            try await shared.setAnswer(answer, forCustomer: customerID, in: environment, timeToLive: life)
            // As above: this process's invalidation ran before the answer was written, or
            // removes it after.
            if Self.currentTicket?.isInvalidated == true { try await shared.invalidate(customer: customerID) }
        }
    }

    /// How long an answer is kept: its time to live, plus the stale-if-error window for groups.
    private func lifetime(of answer: CachedGroupsAnswer) -> Duration {
        switch answer.kind {
        case .groups: configuration.timeToLive + configuration.staleIfError
        case .notFound: configuration.negativeTimeToLive
        }
    }

    // MARK: Budget

    /// Waits for the endpoint's `Retry-After` instant and a token, or throws when the waits
    /// together would pass the configured wait.
    ///
    /// The gate is read again after waiting for a token: a 429 that another call, here or in
    /// another process, received meanwhile names an instant this call must not leave before.
    private func spendBudget(
        for endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) {
        var waited = Duration.zero
        var holdsToken = false
        while true {
            if let until = await rateLimitedUntil(endpoint, in: environment) {
                let wait = AppStoreGroupsClient.duration(from: timeSource.now(), to: until)
                if wait > .zero {
                    guard waited + wait <= configuration.maximumRateLimitWait else {
                        throw AppStoreGroupsError(
                            code: .rateLimitExceeded,
                            message:
                                "the App Store asked for no \(endpoint) requests before this instant; none was sent",
                            retryAfter: until
                        )
                    }
                    try await sleep(wait)
                    waited += wait
                    continue
                }
            }
            if holdsToken { return }
            let rate = configuration.requestsPerSecond[environment] ?? (environment == .production ? 50 : 5)
            let now = timeSource.now()
            let left = configuration.maximumRateLimitWait - waited
            let reserved = buckets.withLock { buckets in
                let key = BucketKey(environment: environment, endpoint: endpoint)
                var bucket = buckets[key] ?? TokenBucket(rate: rate, now: now)
                let wait = bucket.reserve(now: now, maximumWait: left)
                buckets[key] = bucket
                return wait
            }
            guard let reserved else {
                throw AppStoreGroupsError(
                    code: .rateLimitExceeded,
                    message: "this process's budget of \(rate) \(endpoint) requests a second is spent; none was sent",
                    retryAfter: now.addingTimeInterval(1 / rate)
                )
            }
            holdsToken = true
            // No time passed since the gate was read: send now.
            guard reserved > .zero else { return }
            try await sleep(reserved)
            waited += reserved
        }
    }

    /// The endpoint's `Retry-After` instant as this process and the shared store know it.
    private func rateLimitedUntil(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async -> Date? {
        var until = local.localRateLimitedUntil(endpoint, in: environment)
        if let shared,
            let sharedInstant = await withSharedStore({ () throws(AppStoreGroupsError) in
                try await shared.rateLimitedUntil(endpoint, in: environment)
            }) ?? nil
        {
            local.setLocalRateLimitedUntil(sharedInstant, for: endpoint, in: environment)
            until = max(until ?? sharedInstant, sharedInstant)
        }
        return until
    }

    private func sleep(_ duration: Duration) async throws(AppStoreGroupsError) {
        guard duration > .zero else { return }
        do {
            try await timeSource.sleep(duration)
        } catch {
            throw AppStoreGroupsError(code: .cancelled, message: "cancelled while waiting for the rate limit")
        }
    }

    /// Records a 429's instant here and in the shared store.
    private func closeGate(for endpoint: GroupsEndpoint, in environment: StoreEnvironment, until instant: Date) async {
        local.setLocalRateLimitedUntil(instant, for: endpoint, in: environment)
        guard let shared else { return }
        await withSharedStore { () throws(AppStoreGroupsError) in
            try await shared.setRateLimitedUntil(instant, for: endpoint, in: environment)
        }
    }

    // MARK: Shared store failures

    /// Runs a write the caller must know failed (an invalidation): never skipped, and its failure
    /// is recorded like a read's (reads then skip the store for a while) and thrown.
    private func reportingStoreFailure(
        _ body: () async throws(AppStoreGroupsError) -> Void
    ) async throws(AppStoreGroupsError) {
        do {
            try await body()
        } catch {
            _ = await withSharedStore { () throws(AppStoreGroupsError) in throw error }
            throw error
        }
    }

    /// Runs a shared-store call; on failure logs (at most once a minute) and returns `nil`.
    ///
    /// After a failure the store is skipped for ``Configuration/sharedStoreRetryInterval``, so a
    /// store that hangs costs one timeout per interval rather than several per request.
    @discardableResult
    private func withSharedStore<T>(_ body: () async throws(AppStoreGroupsError) -> T) async -> T? {
        let start = timeSource.now()
        if storeHealth.withLock({ health in health.skipUntil.map { start < $0 } ?? false }) { return nil }
        do {
            return try await body()
        } catch {
            let now = timeSource.now()
            let complain = storeHealth.withLock { health in
                health.skipUntil = now.addingTimeInterval(configuration.sharedStoreRetryInterval.seconds)
                guard health.lastComplaint.map({ now.timeIntervalSince($0) >= 60 || now < $0 }) ?? true else {
                    return false
                }
                health.lastComplaint = now
                return true
            }
            if complain {
                log(
                    "shared groups store unavailable, serving from this process's cache and budget "
                        + "(this line repeats at most once a minute): \(error)"
                )
            }
            return nil
        }
    }
}
