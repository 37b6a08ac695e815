import GroupPolicy

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a customer's groups are found: this process's cache, then one flight per customer through
/// the shared cache (and its fetch lock) to the source, within the rate-limit gate.
extension GroupDecisionService {
    /// This process's fresh answer for the customer, or `nil`; throws a fresh negative answer.
    func cached(_ customerID: String, in environment: StoreEnvironment) throws(AppStoreGroupsError) -> Loaded? {
        let now = timeSource.now()
        guard let entry = local.entry(CustomerKey(environment: environment, customerID: customerID), now: now) else {
            return nil
        }
        let loaded: Loaded?
        do {
            loaded = try fresh(entry.answer, decoded: entry.decoded, now: now, environment: environment)
        } catch {
            // A fresh negative answer is a hit too.
            hit(entry.answer, in: environment, fromSharedCache: false)
            throw error
        }
        if loaded != nil { hit(entry.answer, in: environment, fromSharedCache: false) }
        return loaded
    }

    private func hit(_ answer: CachedGroupsAnswer, in environment: StoreEnvironment, fromSharedCache: Bool) {
        observer.cacheHit(
            GroupDecisionEvent.CacheHit(
                environment: environment,
                fetchedAt: answer.fetchedAt,
                fromSharedCache: fromSharedCache
            )
        )
    }

    /// The customer's groups through one flight per customer: the shared cache or the source.
    ///
    /// The id is checked first: a malformed one spends no budget and takes no lock.
    func groups(_ customerID: String, in environment: StoreEnvironment) async throws(AppStoreGroupsError) -> Loaded {
        try RequestValidation.checkIdentifier(customerID, name: "transaction id")
        return try await flights.run(CustomerKey(environment: environment, customerID: customerID)) {
            () throws(AppStoreGroupsError) in
            try await self.load(customerID: customerID, environment: environment)
        }
    }

    /// The cached answer as a flight result when it is fresh; throws a fresh negative answer (a
    /// cache hit too); `nil` when it is too old.
    private func fresh(
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

    /// One flight: the shared cache's answer, or a fetch under the shared lock.
    private func load(customerID: String, environment: StoreEnvironment) async throws(AppStoreGroupsError) -> Loaded {
        let key = CustomerKey(environment: environment, customerID: customerID)
        var fallback = local.entry(key, now: timeSource.now())
        guard let shared else { return try await fetch(key, fallback: fallback, generation: nil) }
        if let answer = await shared.read(
            customerID: customerID,
            { cache throws(AppStoreGroupsError) in
                try await cache.answer(anyTransactionID: customerID, in: environment)
            }
        ) ?? nil {
            if let loaded = try adopt(answer, key: key) { return loaded }
            if answer.kind == .groups, fallback.map({ $0.answer.fetchedAt < answer.fetchedAt }) ?? true {
                fallback = LocalGroupsCache.Entry(answer: answer)
            }
        }
        let owner = UUID().uuidString
        let acquired = await shared.read(customerID: customerID) { cache throws(AppStoreGroupsError) in
            try await cache.acquireFetchLock(
                anyTransactionID: customerID,
                in: environment,
                owner: owner,
                timeToLive: configuration.fetchLockTimeToLive
            )
        }
        if acquired == true {
            let result: Result<Loaded, AppStoreGroupsError>
            do {
                // Another process may have fetched, stored and released between the read above and
                // this lock: its answer saves a request.
                if let answer = await shared.read(
                    customerID: customerID,
                    { cache throws(AppStoreGroupsError) in
                        try await cache.answer(anyTransactionID: customerID, in: environment)
                    }
                ) ?? nil, let loaded = try adopt(answer, key: key) {
                    result = .success(loaded)
                } else {
                    let generation = await generation(key, shared: shared)
                    result = .success(try await fetch(key, fallback: fallback, generation: generation))
                }
            } catch {
                result = .failure(error)
            }
            await shared.read(customerID: customerID) { cache throws(AppStoreGroupsError) in
                try await cache.releaseFetchLock(anyTransactionID: customerID, in: environment, owner: owner)
            }
            return try result.get()
        }
        if acquired == false, let loaded = try await awaitHolder(key, shared: shared) { return loaded }
        let generation = acquired == nil ? nil : await generation(key, shared: shared)
        return try await fetch(key, fallback: fallback, generation: generation)
    }

    /// The customer's invalidation generation, read before asking the source.
    ///
    /// The shared cache keeps the answer only if no invalidation came since. `nil` when the cache
    /// cannot say (the answer is then not written there).
    private func generation(_ key: CustomerKey, shared: SharedCacheGuard) async -> InvalidationGeneration? {
        await shared.read(customerID: key.customerID) { cache throws(AppStoreGroupsError) in
            try await cache.invalidationGeneration(anyTransactionID: key.customerID, in: key.environment)
        }
    }

    /// A shared answer kept here too when fresh, as a flight result; throws a fresh negative one.
    private func adopt(_ answer: CachedGroupsAnswer, key: CustomerKey) throws(AppStoreGroupsError) -> Loaded? {
        let now = timeSource.now()
        do {
            guard let loaded = try fresh(answer, decoded: nil, now: now, environment: key.environment) else {
                return nil
            }
            keepLocally(answer, decoded: loaded.decoded, key: key, now: now)
            hit(answer, in: key.environment, fromSharedCache: true)
            return loaded
        } catch {
            keepLocally(answer, decoded: nil, key: key, now: now)
            hit(answer, in: key.environment, fromSharedCache: true)
            throw error
        }
    }

    /// Polls the shared cache while another process holds the lock, up to the configured wait.
    private func awaitHolder(_ key: CustomerKey, shared: SharedCacheGuard) async throws(AppStoreGroupsError) -> Loaded?
    {
        // Measured on the clock, not as a sum of poll intervals: a slow cache's own time (up to its
        // timeout per poll) counts too, so the wait stays the configured one. A millisecond of
        // slack absorbs the floating-point error of adding up poll intervals.
        let deadline = timeSource.now().addingTimeInterval(configuration.fetchLockWait.seconds)
        while deadline.timeIntervalSince(timeSource.now()) > 0.001 {
            do {
                try await timeSource.sleep(configuration.fetchLockPollInterval)
            } catch {
                throw AppStoreGroupsError(code: .cancelled, message: "cancelled while waiting for another fetch")
            }
            let answer = await shared.read(customerID: key.customerID) { cache throws(AppStoreGroupsError) in
                try await cache.answer(anyTransactionID: key.customerID, in: key.environment)
            }
            guard let answer else { return nil }  // The cache failed or is skipped: fetch here.
            if let answer, let loaded = try adopt(answer, key: key) { return loaded }
        }
        return nil
    }

    /// Asks the source through the rate-limit gate and keeps the answer; on failure, serves a stale
    /// answer within the window or fails closed.
    private func fetch(
        _ key: CustomerKey,
        fallback: LocalGroupsCache.Entry?,
        generation: InvalidationGeneration?
    ) async throws(AppStoreGroupsError) -> Loaded {
        do {
            let (body, response) = try await rateLimitGate.send(.customerGroups, in: key.environment) {
                () throws(AppStoreGroupsError) in
                try await source.customerGroupsAnswer(anyTransactionID: key.customerID, environment: key.environment)
            }
            let now = Self.wholeMilliseconds(timeSource.now())
            let answer = CachedGroupsAnswer(kind: .groups, body: body, fetchedAt: now)
            await keep(answer, decoded: response, key: key, now: now, generation: generation)
            return Loaded(answer: answer, decoded: response, source: .live)
        } catch {
            if error.code == .transactionIDNotFound {
                let now = Self.wholeMilliseconds(timeSource.now())
                let answer = CachedGroupsAnswer(kind: .notFound, body: [], fetchedAt: now)
                await keep(answer, decoded: nil, key: key, now: now, generation: generation)
                throw error
            }
            if error.code != .invalidArgument, error.code != .invalidTransactionID,
                let fallback, fallback.answer.kind == .groups,
                timeSource.now()
                    < fallback.answer.fetchedAt.addingTimeInterval(
                        configuration.timeToLive.seconds + configuration.staleIfError.seconds
                    ),
                let decoded = fallback.decoded ?? Self.decode(fallback.answer)
            {
                observer.staleServed(
                    GroupDecisionEvent.StaleServed(
                        environment: key.environment,
                        fetchedAt: fallback.answer.fetchedAt,
                        error: error
                    )
                )
                return Loaded(answer: fallback.answer, decoded: decoded, source: .stale)
            }
            throw error
        }
    }

    /// The instant cut to whole milliseconds, the resolution a shared cache keeps, so a fetch time
    /// reads the same from every process.
    private static func wholeMilliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }

    private func keepLocally(
        _ answer: CachedGroupsAnswer,
        decoded: GetCustomerGroupsResponse?,
        key: CustomerKey,
        now: Date
    ) {
        var left = answer.fetchedAt.addingTimeInterval(lifetime(of: answer).seconds).timeIntervalSince(now)
        // With a shared cache, this process re-reads it often enough that another process's
        // invalidation reaches it within the bound.
        if shared != nil { left = min(left, configuration.localTimeToLive.seconds) }
        guard left > 0, !FlightTicket.currentIsInvalidated else { return }
        let expires = now.addingTimeInterval((left * 1000).rounded(.down) / 1000)
        local.set(LocalGroupsCache.Entry(answer: answer, decoded: decoded), for: key, expires: expires)
        // Set, then looked at again: an invalidation between the two has either removed the answer
        // itself or is seen here.
        if FlightTicket.currentIsInvalidated { local.remove(key) }
    }

    /// Keeps a fetched answer in the shared cache, then here.
    ///
    /// The shared cache keeps it only if no process invalidated the customer since `generation` was
    /// read. An answer it refused predates an invalidation: it answers the callers already waiting
    /// and is kept nowhere, and this process's older answer goes too.
    private func keep(
        _ answer: CachedGroupsAnswer,
        decoded: GetCustomerGroupsResponse?,
        key: CustomerKey,
        now: Date,
        generation: InvalidationGeneration?
    ) async {
        let life = lifetime(of: answer)
        if let shared, let generation, life > .zero, !FlightTicket.currentIsInvalidated {
            let kept = await shared.read(customerID: key.customerID) { cache throws(AppStoreGroupsError) in
                let kept = try await cache.setAnswer(
                    answer,
                    anyTransactionID: key.customerID,
                    in: key.environment,
                    timeToLive: life,
                    groupIDs: decoded?.groups.map(\.groupID) ?? [],
                    ifGeneration: generation
                )
                // As below: this process's invalidation ran before the answer was written, or
                // removes it after.
                if kept, FlightTicket.currentIsInvalidated {
                    try await cache.invalidate(anyTransactionID: key.customerID)
                }
                return kept
            }
            if kept == false {
                local.remove(key)
                return
            }
        }
        keepLocally(answer, decoded: decoded, key: key, now: now)
    }

    /// How long an answer is kept: its time to live, plus the stale-if-error window for groups.
    private func lifetime(of answer: CachedGroupsAnswer) -> Duration {
        switch answer.kind {
        case .groups: configuration.timeToLive + configuration.staleIfError
        case .notFound: configuration.negativeTimeToLive
        }
    }
}
