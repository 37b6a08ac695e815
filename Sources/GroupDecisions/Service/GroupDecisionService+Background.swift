import AppStoreGroups

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
    /// Cancelling its task cancels the refreshes under way, and it returns once they have ended; a
    /// refresh that fails leaves the cached answer as it was. The service works without it,
    /// refreshing nothing ahead. See the article "Embedding in an app server", section
    /// "Lifecycle", for running it beside `PolicyStore.run()`.
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

    /// One worker: refreshes the customers queued, one at a time, until its task is cancelled.
    private func refreshWorker() async {
        refreshes.join()
        defer { refreshes.leave() }
        while let key = await refreshes.next() {
            // As the customer's flight, so that callers for them join it, unless one is under way.
            let body = { @Sendable (permit: ServingPermit) async throws(AppStoreGroupsError) -> FlightOutcome in
                await self.sharedFlight.refresh(key, permit: permit)
            }
            if let flight = flights.startIfIdle(key, body) {
                _ = await withTaskCancellationHandler {
                    await flight.task.result
                } onCancel: {
                    flight.task.cancel()
                }
                flights.end(key, permit: flight.permit)
            }
            refreshes.done(key)
        }
    }
}
