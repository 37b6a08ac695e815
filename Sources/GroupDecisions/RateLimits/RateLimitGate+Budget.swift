import AppStoreGroups
import Foundation
import GroupPolicy

/// Which budget a token comes from (see ``RateLimitGate``'s discussion, "Budget").
extension RateLimitGate {
    /// Takes a token from the budget that holds now: the wait before using it, or `nil` (nothing
    /// taken) with the seconds until the next is due.
    func takeToken(
        _ key: EndpointKey,
        maximumWait: Duration
    ) async -> (wait: Duration?, retryAfter: TimeInterval, budget: Budget) {
        let fleet = await fleetToken(key) { cache, budget throws(AppStoreGroupsError) in
            try await cache.takeBudgetToken(from: budget, maximumWait: maximumWait)
        }
        let budget: Budget
        switch fleet {
        case .answered(.taken(let wait)): return (wait, 0, .fleet)
        case .answered(.notTaken(let wait)): return (nil, wait.seconds, .fleet)
        case .fallBack(let fallback): budget = fallback
        }
        if budget == .cutOff { return (nil, cutOffRetrySeconds, .cutOff) }
        let (token, rate) = withLocalBucket(key, budget: budget) { bucket, now in
            (bucket.take(now: now, maximumWait: maximumWait), bucket.rate)
        }
        return (token.taken ? token.wait : nil, 1 / rate, budget)
    }

    /// Takes a refresh's token from the budget that holds now: `nil` when taken, or the wait until
    /// one could be.
    func takeRefreshToken(_ key: EndpointKey) async -> Duration? {
        let fleet = await fleetToken(key) { cache, budget throws(AppStoreGroupsError) in
            try await cache.takeBudgetToken(from: budget, keeping: configuration.reserve(burst: budget.burst))
        }
        let budget: Budget
        switch fleet {
        case .answered(.taken): return nil
        case .answered(.notTaken(let wait)): return wait
        case .fallBack(let fallback): budget = fallback
        }
        if budget == .cutOff { return .milliseconds(Int64(cutOffRetrySeconds * 1000)) }
        let answer = withLocalBucket(key, budget: budget) { bucket, now in
            bucket.take(now: now, keeping: configuration.reserve(burst: bucket.burst))
        }
        return answer.taken ? nil : answer.wait
    }

    /// The fleet's answer to `take` (a request's token, or a refresh's) when the shared cache keeps
    /// the fleet's budget; otherwise the budget that holds instead: this process's own without a
    /// shared cache that keeps one, this process's share when the cache did not answer.
    private func fleetToken(
        _ key: EndpointKey,
        _ take: (any SharedFleetBudget, FleetBudget) async throws(AppStoreGroupsError) -> FleetBudgetToken
    ) async -> FleetAnswer {
        guard let shared, let cache = shared.caches.fleetBudget else { return .fallBack(.process) }
        let rate = configuration.rate(for: key.environment)
        let burst = configuration.burst(for: key.environment)
        // A bucket the cache lost (a flush, an eviction) forgets the reservations of the callers
        // still waiting for their tokens, at most the rate times the longest wait: the new bucket
        // starts with the burst less those, so together they send at most one burst.
        let initialTokens = max(0, burst - rate * configuration.maximumRateLimitWait.seconds)
        let budget = FleetBudget(
            key.endpoint,
            in: key.environment,
            ratePerSecond: rate,
            burst: burst,
            initialTokens: initialTokens
        )
        let answer = await shared.read(evenWhenSlow: true) { () throws(AppStoreGroupsError) in
            try await take(cache, budget)
        }
        return answer.map(FleetAnswer.answered) ?? .fallBack(configuration.fallbackShare > 0 ? .share : .cutOff)
    }

    /// When a cut-off process may try again: when it next asks the shared cache (at least a second).
    private var cutOffRetrySeconds: TimeInterval {
        max(1, shared?.settings.retryInterval.seconds ?? 0)
    }

    /// What ``fleetToken(_:_:)`` found.
    private enum FleetAnswer {
        /// The shared cache answered.
        case answered(FleetBudgetToken)
        /// The fleet's budget was not asked (or did not answer): this budget holds.
        case fallBack(Budget)
    }

    /// Runs `body` on `key`'s bucket in this process's budget (`.process`) or in its share of the
    /// fleet's (`.share`), made full at that budget's rate and burst on first use.
    private func withLocalBucket<Result>(
        _ key: EndpointKey,
        budget: Budget,
        _ body: (inout TokenBucket, Date) -> Result
    ) -> Result {
        let share = budget == .share ? configuration.fallbackShare : 1
        let rate = configuration.rate(for: key.environment) * share
        let burst = max(1, configuration.burst(for: key.environment) * share)
        let now = timeSource.now()
        return (budget == .share ? shareBuckets : buckets).withLock { buckets in
            var bucket = buckets[key] ?? TokenBucket(rate: rate, burst: burst, now: now)
            let result = body(&bucket, now)
            buckets[key] = bucket
            return result
        }
    }
}
