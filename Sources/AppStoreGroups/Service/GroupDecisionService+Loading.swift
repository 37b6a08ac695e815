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

    func hit(_ answer: CachedGroupsAnswer, in environment: StoreEnvironment, fromSharedCache: Bool) {
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

    /// Asks the source through the rate-limit gate and keeps the answer; on failure, serves a stale
    /// answer within the window or fails closed.
    ///
    /// The write that keeps the answer in the shared cache releases `lock` when one is given.
    func fetch(
        _ key: CustomerKey,
        fallback: LocalGroupsCache.Entry?,
        generation: InvalidationGeneration?,
        lock: HeldFetchLock? = nil
    ) async throws(AppStoreGroupsError) -> Loaded {
        do {
            let (body, response) = try await rateLimitGate.send(.customerGroups, in: key.environment) {
                () throws(AppStoreGroupsError) in
                try await source.customerGroupsAnswer(anyTransactionID: key.customerID, environment: key.environment)
            }
            let now = Self.wholeMilliseconds(timeSource.now())
            let answer = CachedGroupsAnswer(kind: .groups, body: body, fetchedAt: now)
            await keep(answer, decoded: response, key: key, now: now, generation: generation, lock: lock)
            return Loaded(answer: answer, decoded: response, source: .live)
        } catch {
            if error.code == .transactionIDNotFound {
                let now = Self.wholeMilliseconds(timeSource.now())
                let answer = CachedGroupsAnswer(kind: .notFound, body: [], fetchedAt: now)
                await keep(answer, decoded: nil, key: key, now: now, generation: generation, lock: lock)
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

    func keepLocally(
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
    /// and is kept nowhere, and this process's older answer goes too. The same call releases `lock`
    /// when one is given.
    func keep(
        _ answer: CachedGroupsAnswer,
        decoded: GetCustomerGroupsResponse?,
        key: CustomerKey,
        now: Date,
        generation: InvalidationGeneration?,
        lock: HeldFetchLock? = nil
    ) async {
        let life = lifetime(of: answer)
        if let shared, let generation, life > .zero, !FlightTicket.currentIsInvalidated {
            let kept = await shared.read(customerID: key.customerID) { cache throws(AppStoreGroupsError) in
                let groupIDs = decoded?.groups.map(\.groupID) ?? []
                let kept: Bool
                if let lock {
                    kept = try await cache.setAnswer(
                        answer,
                        anyTransactionID: key.customerID,
                        in: key.environment,
                        timeToLive: life,
                        groupIDs: groupIDs,
                        ifGeneration: generation,
                        releasingFetchLock: lock.owner
                    )
                    lock.markReleased()
                } else {
                    kept = try await cache.setAnswer(
                        answer,
                        anyTransactionID: key.customerID,
                        in: key.environment,
                        timeToLive: life,
                        groupIDs: groupIDs,
                        ifGeneration: generation
                    )
                }
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
