import AppStoreGroups
import Foundation
import GroupPolicy

/// How a customer's groups are found: this process's cache, then one flight per customer through
/// the shared cache (and its fetch lock) to the source, within the rate-limit gate.
extension GroupDecisionService {
    /// The customer's groups through one flight per customer: the shared cache or the source.
    ///
    /// The id is checked first: a malformed one spends no budget and takes no lock.
    func groups(_ customerID: String, in environment: StoreEnvironment) async throws(AppStoreGroupsError) -> Loaded {
        try RequestValidation.checkIdentifier(customerID, name: "transaction id")
        let key = CustomerKey(environment: environment, customerID: customerID)
        let flight = { @Sendable () async throws(AppStoreGroupsError) -> Loaded in
            try await self.load(customerID: customerID, environment: environment)
        }
        let begun = timeSource.now()
        let joined = try await flights.runReportingStart(key, flight)
        var loaded = joined.value
        if loaded.refreshSkipped {
            // Joined a refresh ahead that fetched nothing: a flight of this caller's own.
            loaded = try await flights.run(key, flight)
        } else if mayPredateAnInvalidation(joined.started, callerBegan: begun), loaded.source != .stale {
            // The flight's answer is kept here stamped with the count its first read saw: served to
            // this caller only as a copy the count confirms now, otherwise from a flight of its own.
            if let confirmed = try await confirmedCopy(customerID, in: environment) {
                loaded = confirmed
            } else {
                loaded = try await flights.run(key, joiningFlightsSince: begun, flight)
            }
        }
        if loaded.source == .cache { refreshIfDue(loaded.answer, key: key, now: timeSource.now()) }
        return loaded
    }

    /// Whether a flight begun at `started` may carry an answer that an invalidation through another
    /// process removed before this caller began: with a shared cache that counts invalidations, when
    /// it began an invalidation check interval or more before the caller.
    ///
    /// An invalidation that returned before the caller began counted itself at least one interval
    /// earlier, so a flight begun less than an interval before the caller read the count after it.
    private func mayPredateAnInvalidation(_ started: Date, callerBegan begun: Date) -> Bool {
        guard let invalidations, !invalidations.isUnsupported else { return false }
        return begun.timeIntervalSince(started) >= configuration.sharedCache.invalidationCheckInterval.seconds
    }

    /// This process's copy for the customer if the invalidation count confirms it now (read once more
    /// when the last reading is too old), or `nil`; throws a fresh negative answer.
    private func confirmedCopy(
        _ customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> Loaded? {
        switch try cached(customerID, in: environment) {
        case .hit(let hit): hit
        case .miss: nil
        case .unconfirmed: try await confirmedHit(customerID, in: environment)
        }
    }

    /// The cached answer as a flight result when it is fresh; throws a fresh negative answer (a
    /// cache hit too); `nil` when it is too old.
    func fresh(
        _ answer: CachedGroupsAnswer,
        decoded: GetCustomerGroupsResponse?,
        now: Date,
        environment: StoreEnvironment
    ) throws(AppStoreGroupsError) -> Loaded? {
        switch answer.kind {
        case .notFound:
            guard now < answer.fetchedAt.addingTimeInterval(negativeTimeToLiveSeconds) else { return nil }
            throw Self.notFound(since: answer.fetchedAt)
        case .groups:
            guard now < answer.fetchedAt.addingTimeInterval(timeToLiveSeconds),
                let decoded = decoded ?? Self.decode(answer)
            else { return nil }
            return Loaded(answer: answer, decoded: decoded, source: .cache)
        }
    }

    private static func decode(_ answer: CachedGroupsAnswer) -> GetCustomerGroupsResponse? {
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

    /// Asks the source through the rate-limit gate and keeps the answer.
    ///
    /// With an answer past its time to live but within the maximum age, the request is a refresh:
    /// sent only if the budget spares a token beyond its reserve, and that answer is served stale
    /// (reason `budget`) when it does not, or when Apple answers 429. When the fetch fails, an
    /// answer within the stale-if-error window (never past the maximum age) is served stale (reason
    /// `error`); otherwise the call fails closed.
    ///
    /// The write that keeps the answer in the shared cache releases `lock` when one is given.
    func fetch(
        _ key: CustomerKey,
        fallback: LocalGroupsCache.Entry?,
        generation: InvalidationGeneration?,
        stamp: UInt64?,
        lock: HeldFetchLock? = nil
    ) async throws(AppStoreGroupsError) -> Loaded {
        let now = timeSource.now()
        let stale = fallback.flatMap { staleAnswer($0, now: now, within: maximumAgeSeconds) }
        do {
            if let stale {
                do {
                    try await rateLimitGate.admitRefresh(
                        EndpointKey(environment: key.environment, endpoint: .customerGroups)
                    )
                } catch {
                    return served(stale, reason: .budget, error: error, environment: key.environment)
                }
            }
            return try await fetchAndKeep(
                key,
                generation: generation,
                stamp: stamp,
                admitted: stale != nil,
                lock: lock
            )
        } catch {
            if let stale, error.code == .rateLimitExceeded, error.httpStatus == 429 {
                return served(stale, reason: .budget, error: error, environment: key.environment)
            }
            let window = min(timeToLiveSeconds + configuration.freshness.staleIfError.seconds, maximumAgeSeconds)
            if error.code != .invalidArgument, error.code != .invalidTransactionID,
                error.code != .transactionIDNotFound,
                let fallback, let loaded = staleAnswer(fallback, now: timeSource.now(), within: window)
            {
                return served(loaded, reason: .error, error: error, environment: key.environment)
            }
            throw error
        }
    }

    /// Sends the request (through the gate, or as admitted already) and keeps the answer; a
    /// `TransactionIdNotFoundError` is kept as a negative answer and thrown.
    func fetchAndKeep(
        _ key: CustomerKey,
        generation: InvalidationGeneration?,
        stamp: UInt64?,
        admitted: Bool,
        lock: HeldFetchLock? = nil
    ) async throws(AppStoreGroupsError) -> Loaded {
        let request = { () async throws(AppStoreGroupsError) -> ([UInt8], GetCustomerGroupsResponse) in
            try await self.source.customerGroupsAnswer(anyTransactionID: key.customerID, environment: key.environment)
        }
        do {
            let (body, response) =
                admitted
                ? try await rateLimitGate.sendAdmitted(
                    EndpointKey(environment: key.environment, endpoint: .customerGroups),
                    request
                )
                : try await rateLimitGate.send(.customerGroups, in: key.environment, request)
            let now = Self.wholeMilliseconds(timeSource.now())
            let answer = CachedGroupsAnswer(kind: .groups, body: body, fetchedAt: now)
            await keep(answer, decoded: response, key: key, now: now, generation: generation, stamp: stamp, lock: lock)
            return Loaded(answer: answer, decoded: response, source: .live)
        } catch {
            if error.code == .transactionIDNotFound {
                let now = Self.wholeMilliseconds(timeSource.now())
                let answer = CachedGroupsAnswer(kind: .notFound, body: [], fetchedAt: now)
                await keep(answer, decoded: nil, key: key, now: now, generation: generation, stamp: stamp, lock: lock)
            }
            throw error
        }
    }

    /// The answer as a stale flight result when it holds groups and is younger than `seconds`.
    private func staleAnswer(_ entry: LocalGroupsCache.Entry, now: Date, within seconds: Double) -> Loaded? {
        guard entry.answer.kind == .groups, now < entry.answer.fetchedAt.addingTimeInterval(seconds),
            let decoded = entry.decoded ?? Self.decode(entry.answer)
        else { return nil }
        return Loaded(answer: entry.answer, decoded: decoded, source: .stale)
    }

    /// A stale answer served: its reason and age set, the observer told.
    private func served(
        _ loaded: Loaded,
        reason: ServedDecision.StaleReason,
        error: AppStoreGroupsError,
        environment: StoreEnvironment
    ) -> Loaded {
        var loaded = loaded
        let age = Duration.roundedUp(from: loaded.answer.fetchedAt, to: timeSource.now())
        loaded.staleReason = reason
        loaded.staleAge = age
        observer.staleServed(
            GroupDecisionEvent.StaleServed(
                environment: environment,
                fetchedAt: loaded.answer.fetchedAt,
                error: error,
                reason: reason,
                age: age
            )
        )
        return loaded
    }

    /// The instant cut to whole milliseconds, the resolution a shared cache keeps, so a fetch time
    /// reads the same from every process.
    private static func wholeMilliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }

    /// Keeps an answer in this process's cache, stamped with the invalidation count read before
    /// the read or fetch that produced it began.
    func keepLocally(
        _ answer: CachedGroupsAnswer,
        decoded: GetCustomerGroupsResponse?,
        key: CustomerKey,
        now: Date,
        stamp: UInt64?
    ) {
        var left = answer.fetchedAt.addingTimeInterval(lifetime(of: answer).seconds).timeIntervalSince(now)
        // With a shared cache, this process re-reads it often enough that another process's
        // invalidation reaches it within the bound.
        if shared != nil { left = min(left, configuration.localCache.timeToLive.seconds) }
        guard left > 0, !FlightTicket.currentOvertakes(answer, decoded: decoded) else { return }
        let expires = now.addingTimeInterval((left * 1000).rounded(.down) / 1000)
        local.set(
            LocalGroupsCache.Entry(answer: answer, decoded: decoded, invalidationCount: stamp),
            for: key,
            expires: expires
        )
        // Set, then looked at again: an invalidation between the two has either removed the answer
        // itself or is seen here.
        if FlightTicket.currentOvertakes(answer, decoded: decoded) { local.remove(key) }
    }

    /// Keeps a fetched answer in the shared cache, then here.
    ///
    /// The shared cache keeps it only if no process invalidated the customer since `generation` was
    /// read. An answer it refused predates an invalidation: it answers the callers already waiting
    /// and is kept nowhere, and this process's older answer goes too. The same call releases `lock`
    /// when one is given.
    func keep(
        _ answer: CachedGroupsAnswer,
        decoded: GetCustomerGroupsResponse?,
        key: CustomerKey,
        now: Date,
        generation: InvalidationGeneration?,
        stamp: UInt64?,
        lock: HeldFetchLock? = nil
    ) async {
        let life = lifetime(of: answer)
        if let shared, let generation, life > .zero, !FlightTicket.currentOvertakes(answer, decoded: decoded) {
            let kept = await shared.read(customerID: key.customerID) { cache throws(AppStoreGroupsError) in
                let write = AnswerWrite(
                    answer,
                    anyTransactionID: key.customerID,
                    in: key.environment,
                    timeToLive: life,
                    groupIDs: decoded?.groups.map(\.groupID) ?? [],
                    ifGeneration: generation
                )
                let kept: Bool
                if let lock {
                    kept = try await cache.setAnswer(write, releasingFetchLock: lock.owner)
                    lock.markReleased()
                } else {
                    kept = try await cache.setAnswer(write)
                }
                // As below: this process's invalidation ran before the answer was written, or
                // removes it after.
                if kept, FlightTicket.currentOvertakes(answer, decoded: decoded) {
                    try await cache.invalidate(anyTransactionID: key.customerID)
                }
                return kept
            }
            if kept == false {
                local.remove(key)
                return
            }
        }
        keepLocally(answer, decoded: decoded, key: key, now: now, stamp: stamp)
    }

    /// How long an answer is kept: as long as the freshness policy lets it be served at all.
    private func lifetime(of answer: CachedGroupsAnswer) -> Duration {
        configuration.freshness.lifetime(of: answer.kind)
    }
}
