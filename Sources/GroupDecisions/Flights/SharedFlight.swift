import AppStoreGroups
import Foundation
import GroupPolicy

/// One flight per customer through the shared cache: its answer, or a fetch under its lock while
/// the other processes wait for the holder's answer; and a refresh ahead, under the same lock;
/// what it reads there it hands on as a ``FlightRead``.
struct SharedFlight: Sendable {
    let context: ServingContext
    let fetcher: Fetcher
    let keeper: AnswerKeeper

    private var timeSource: TimeSource { context.timeSource }

    /// One flight: the shared cache's answer, or a fetch under the shared lock.
    func load(
        customerID: String,
        environment: StoreEnvironment,
        permit: ServingPermit
    ) async throws(AppStoreGroupsError) -> LoadedGroups {
        let key = CustomerKey(environment: environment, customerID: customerID)
        var fallback = context.local.entry(key, now: timeSource.now())
        guard let shared = context.shared, let invalidations = context.invalidations,
            let counts = shared.caches.invalidations
        else {
            return try await fetcher.fetch(key, fallback: fallback, permit: permit, read: FlightRead()).result.get()
        }
        // Read even while the cache is skipped as slow: a slow read costs less than a first fetch
        // the budget may refuse. What the flight keeps here is stamped with the count read with
        // the answer, or the one read last when that read fails.
        var stamp = invalidations.stamp
        let started = timeSource.now()
        let read = await shared.read(
            customerID: customerID,
            evenWhenSlow: true,
            { () throws(AppStoreGroupsError) in
                try await counts.answerAndInvalidationCount(anyTransactionID: customerID, in: environment)
            }
        )
        if let read {
            invalidations.record(read.invalidationCount, started: started)
            stamp = read.invalidationCount
        }
        // This process's copy stands in for a fetch that cannot be made (stale serving) only while
        // a reading begun since the flight began confirms it: callers who begin up to an interval
        // after the flight take its answer. Without one (the cache failing or skipped), it does not.
        if let entry = fallback,
            !invalidations.confirms(entry.invalidationCount, now: timeSource.now(), since: permit.began)
        {
            fallback = nil
        }
        // A shared answer: served when fresh, otherwise the fallback when it is newer.
        func adopted(_ answer: CachedGroupsAnswer?) throws(AppStoreGroupsError) -> LoadedGroups? {
            guard let answer else { return nil }
            if let loaded = try adopt(answer, key: key, permit: permit, stamp: stamp) { return loaded }
            fallback = newer(answer, than: fallback)
            return nil
        }
        if let loaded = try adopted(read?.answer) { return loaded }
        // The lock, the answer another process may have stored since the read above, and the
        // generation to write with: one call (the write then releases the lock in one more).
        let locked = await underFetchLock(key, shared: shared) {
            attempt,
            owner -> (Result<LoadedGroups, AppStoreGroupsError>, releasedLock: Bool) in
            do throws(AppStoreGroupsError) {
                if let loaded = try adopted(attempt.answer) { return (.success(loaded), releasedLock: false) }
                let read = FlightRead(stamp: stamp, generation: await generation(attempt, key: key, shared: shared))
                let fetched = await fetcher.fetch(key, fallback: fallback, permit: permit, read: read, lock: owner)
                return (fetched.result, releasedLock: fetched.releasedLock)
            } catch {
                return (.failure(error), releasedLock: false)
            }
        }
        switch locked {
        case .unavailable:
            let read = FlightRead(stamp: stamp)
            return try await fetcher.fetch(key, fallback: fallback, permit: permit, read: read).result.get()
        case .held(let result):
            return try result.get()
        case .heldElsewhere(let attempt):
            // The holder may have stored its answer already.
            if let loaded = try adopted(attempt.answer) { return loaded }
            if let loaded = try await awaitHolder(key, shared: shared, permit: permit, stamp: stamp) { return loaded }
            let read = FlightRead(stamp: stamp, generation: await generation(attempt, key: key, shared: shared))
            return try await fetcher.fetch(key, fallback: fallback, permit: permit, read: read).result.get()
        }
    }

    /// What asking for the customer's fetch lock came to.
    enum LockOutcome<Value: Sendable>: Sendable {
        /// The shared cache could not be asked: the caller goes on as without one.
        case unavailable
        /// Another process holds the lock; what the cache answered with it.
        case heldElsewhere(FetchLockAttempt)
        /// Taken, and released after the work done under it: the work's value.
        case held(Value)
    }

    /// The customer's fetch lock, asked for together with the answer and the generation, held while
    /// `work` runs, then released unless the write that kept the answer released it; without a fetch
    /// lock, `work` runs with the answer and generation read and no lock held (owner `nil`).
    func underFetchLock<Value: Sendable>(
        _ key: CustomerKey,
        shared: SharedCacheGuard,
        _ work: (FetchLockAttempt, _ owner: String?) async -> (Value, releasedLock: Bool)
    ) async -> LockOutcome<Value> {
        guard let answers = shared.caches.answers else { return .unavailable }
        guard let lock = shared.caches.fetchLock else {
            let attempt = await shared.read(customerID: key.customerID) { () throws(AppStoreGroupsError) in
                FetchLockAttempt(
                    acquired: true,
                    answer: try await answers.answer(anyTransactionID: key.customerID, in: key.environment),
                    generation: try await answers.invalidationGeneration(
                        anyTransactionID: key.customerID,
                        in: key.environment
                    )
                )
            }
            guard let attempt else { return .unavailable }
            return .held(await work(attempt, nil).0)
        }
        let owner = UUID().uuidString
        let attempt = await shared.read(customerID: key.customerID) { () throws(AppStoreGroupsError) in
            try await lock.acquireFetchLockAndRead(
                anyTransactionID: key.customerID,
                in: key.environment,
                owner: owner,
                timeToLive: context.fetchLockTimeToLive
            )
        }
        guard let attempt else { return .unavailable }
        guard attempt.acquired else { return .heldElsewhere(attempt) }
        let (value, releasedLock) = await work(attempt, owner)
        if !releasedLock {
            await shared.read(customerID: key.customerID) { () throws(AppStoreGroupsError) in
                try await lock.releaseFetchLock(anyTransactionID: key.customerID, in: key.environment, owner: owner)
            }
        }
        return .held(value)
    }

    /// The shared answer as the fallback when it holds groups fetched later than the fallback's.
    private func newer(_ answer: CachedGroupsAnswer, than fallback: LocalGroupsCache.Entry?) -> LocalGroupsCache.Entry?
    {
        guard answer.kind == .groups, fallback.map({ $0.answer.fetchedAt < answer.fetchedAt }) ?? true else {
            return fallback
        }
        return LocalGroupsCache.Entry(answer: answer)
    }

    /// The customer's invalidation generation, the condition of the shared write: the one read with
    /// the lock, or read now; `nil` when the cache cannot say (nothing is written there).
    private func generation(
        _ attempt: FetchLockAttempt,
        key: CustomerKey,
        shared: SharedCacheGuard
    ) async -> InvalidationGeneration? {
        if let generation = attempt.generation { return generation }
        guard let answers = shared.caches.answers else { return nil }
        return await shared.read(customerID: key.customerID) { () throws(AppStoreGroupsError) in
            try await answers.invalidationGeneration(anyTransactionID: key.customerID, in: key.environment)
        }
    }

    /// A shared answer kept here too when fresh (as the permit clears it, stamped `stamp`), as a
    /// flight result; throws a fresh negative one.
    func adopt(
        _ answer: CachedGroupsAnswer,
        key: CustomerKey,
        permit: ServingPermit,
        stamp: UInt64?
    ) throws(AppStoreGroupsError) -> LoadedGroups? {
        let now = timeSource.now()
        let verdict = context.verdict(answer, customerID: key.customerID, now: now)
        do {
            let hit = try context.servedAsItIs(answer, verdict: verdict, in: key.environment, fromSharedCache: true)
            guard let loaded = hit else { return nil }
            keeper.keepLocally(answer, decoded: loaded.decoded, key: key, now: now, permit: permit, stamp: stamp)
            return loaded
        } catch {
            keeper.keepLocally(answer, decoded: nil, key: key, now: now, permit: permit, stamp: stamp)
            throw error
        }
    }

    /// Polls the shared cache while another process holds the lock, up to the configured wait.
    private func awaitHolder(
        _ key: CustomerKey,
        shared: SharedCacheGuard,
        permit: ServingPermit,
        stamp: UInt64?
    ) async throws(AppStoreGroupsError) -> LoadedGroups? {
        // Measured on the clock, so a slow cache's own time counts too; a millisecond of slack
        // absorbs the floating-point error of adding up poll intervals.
        guard let answers = shared.caches.answers else { return nil }
        let deadline = timeSource.now().addingTimeInterval(context.fetchLockWait.seconds)
        while deadline.timeIntervalSince(timeSource.now()) > 0.001 {
            do {
                try await timeSource.sleep(context.fetchLockPollInterval)
            } catch {
                throw AppStoreGroupsError(code: .cancelled, message: "cancelled while waiting for another fetch")
            }
            let answer = await shared.read(customerID: key.customerID) { () throws(AppStoreGroupsError) in
                try await answers.answer(anyTransactionID: key.customerID, in: key.environment)
            }
            guard let answer else { return nil }  // The cache failed or is skipped: fetch here.
            if let answer, let loaded = try adopt(answer, key: key, permit: permit, stamp: stamp) { return loaded }
        }
        return nil
    }
}
