import AppStoreGroups
import Foundation
import GroupPolicy

/// The service's background work: refreshes ahead, and sweeping expired answers.
extension GroupDecisionService {
    /// The most customers queued or being refreshed ahead at once in one process: 1,000.
    ///
    /// Beyond it a hit that finds its answer due a refresh asks for none, and the next hit for that
    /// customer asks again; the queue costs at most this many customer keys.
    public static let maximumQueuedRefreshes = 1_000

    /// The service's background work, until the task running it is cancelled: refreshes ahead
    /// (see ``FreshnessPolicy/refreshAfter``), at most ``Configuration/maximumRefreshesInFlight`` at
    /// once, and every ``GroupDecisionService/Configuration/LocalCache/sweepInterval`` the removal of expired answers from this
    /// process's cache, so their memory returns before the byte bound would evict them.
    ///
    /// The service works without it: nothing is then refreshed ahead (an answer past its time to
    /// live is fetched by the next caller), and expired answers are removed when they are next
    /// read, or evicted. It needs no actor: run it in a task group or a service group beside
    /// `PolicyStore.run()`. Every refresh runs inside it: cancelling its task cancels the refreshes
    /// under way (their requests and shared-cache calls are cancelled), and it
    /// returns only once they have ended, so no refresh outlives it. Refreshes never fail it: a
    /// refresh that fails leaves the cached answer as it was.
    ///
    /// - Throws: `CancellationError` when its task is cancelled.
    public func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            for _ in 0..<configuration.maximumRefreshesInFlight {
                group.addTask { await self.refreshWorker() }
            }
            while true {
                try Task.checkCancellation()
                do {
                    try await timeSource.sleep(configuration.localCache.sweepInterval)
                } catch {
                    throw CancellationError()
                }
                try Task.checkCancellation()
                local.removeExpired(now: timeSource.now())
            }
        }
    }

    /// Asks for a refresh ahead of a fresh answer when it is old enough; one comparison otherwise.
    func refreshIfDue(_ answer: CachedGroupsAnswer, key: CustomerKey, now: Date) {
        guard answer.kind == .groups, isRefreshDue(answer, customerID: key.customerID, now: now) else { return }
        refreshes.offer(key)
    }

    /// Whether `answer` is past its own refresh point.
    ///
    /// The point is the policy's, moved by the answer's draw of the spread, so that answers
    /// fetched together come due apart. Before the earliest point (every hit in the first three
    /// quarters of the time to live) it is one comparison.
    func isRefreshDue(_ answer: CachedGroupsAnswer, customerID: String, now: Date) -> Bool {
        let age = now.timeIntervalSince(answer.fetchedAt)
        guard age >= refreshAheadSeconds else { return false }
        let draw = FreshnessPolicy.draw(customerID: customerID, fetchedAt: answer.fetchedAt)
        guard let point = configuration.freshness.refreshPoint(draw: draw) else { return false }
        return age >= point.seconds
    }

    /// One worker: refreshes the customers queued, one at a time, until its task is cancelled.
    private func refreshWorker() async {
        refreshes.join()
        defer { refreshes.leave() }
        while let key = await refreshes.next() {
            // As the customer's flight, so that callers for them join it, unless one is under way.
            if let flight = flights.startIfIdle(key, { () throws(AppStoreGroupsError) in await self.refresh(key) }) {
                _ = await withTaskCancellationHandler {
                    await flight.task.result
                } onCancel: {
                    flight.task.cancel()
                }
                flights.end(key, ticket: flight.ticket)
            }
            refreshes.done(key)
        }
    }

    /// A refresh ahead, one for the fleet: the shared fetch lock taken without waiting, or none.
    ///
    /// It takes a token only if the budget spares one beyond its reserve, and keeps the new answer
    /// under the invalidation generation read before asking Apple. Never throws: a refresh that
    /// sends nothing or fails leaves the cached answer as it was.
    private func refresh(_ key: CustomerKey) async -> Loaded {
        let skipped = Loaded(
            answer: CachedGroupsAnswer(kind: .groups, body: [], fetchedAt: .distantPast),
            decoded: GetCustomerGroupsResponse(groups: []),
            source: .cache,
            refreshSkipped: true
        )
        guard let shared else {
            // An answer that has gone (invalidated, evicted) is not refreshed: the next caller fetches.
            guard local.entry(key, now: timeSource.now())?.answer.kind == .groups else { return skipped }
            return (try? await fetchAdmittingRefresh(key, generation: nil, stamp: nil)) ?? skipped
        }
        // What it keeps here is stamped with the invalidation count read before it began.
        let stamp = invalidations?.stamp
        let owner = UUID().uuidString
        // The lock, the answer and the generation in one call: another process may have refreshed
        // the customer since this one read its answer.
        let attempt = await shared.read(customerID: key.customerID) { cache throws(AppStoreGroupsError) in
            try await cache.acquireFetchLockAndRead(
                anyTransactionID: key.customerID,
                in: key.environment,
                owner: owner,
                timeToLive: configuration.sharedCache.fetchLockTimeToLive
            )
        }
        var result = skipped
        if let attempt {
            // Another process fetches or refreshes the customer: its answer will do.
            guard attempt.acquired else { return skipped }
            let now = timeSource.now()
            if attempt.answer?.kind != .groups {
                // The answer has gone (invalidated, expired) or is negative: the next caller fetches.
            } else if let answer = attempt.answer, !isRefreshDue(answer, customerID: key.customerID, now: now),
                let loaded = try? fresh(answer, decoded: nil, now: now, environment: key.environment)
            {
                keepLocally(answer, decoded: loaded.decoded, key: key, now: now, stamp: stamp)
                result = loaded
            } else {
                result =
                    (try? await fetchAdmittingRefresh(key, generation: attempt.generation, stamp: stamp)) ?? skipped
            }
            await shared.read(customerID: key.customerID) { cache throws(AppStoreGroupsError) in
                try await cache.releaseFetchLock(anyTransactionID: key.customerID, in: key.environment, owner: owner)
            }
        } else {
            // The shared cache is unavailable: refreshed for this process alone, kept here only.
            result = (try? await fetchAdmittingRefresh(key, generation: nil, stamp: stamp)) ?? skipped
        }
        return result
    }

    /// A refresh's request, if the budget spares a token, and its answer kept.
    private func fetchAdmittingRefresh(
        _ key: CustomerKey,
        generation: InvalidationGeneration?,
        stamp: UInt64?
    ) async throws(AppStoreGroupsError) -> Loaded {
        try await rateLimitGate.admitRefresh(EndpointKey(environment: key.environment, endpoint: .customerGroups))
        return try await fetchAndKeep(key, generation: generation, stamp: stamp, admitted: true)
    }
}
