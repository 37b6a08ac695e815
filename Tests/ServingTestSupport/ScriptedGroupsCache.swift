package import AppStoreGroups
package import Foundation
package import GroupDecisions
package import GroupDecisionsTesting
package import GroupPolicy
import Synchronization

/// The one scriptable shared cache of the serving tests: forwards every call to another cache (an in-memory one unless
/// told) and records it by name; a test scripts calls to fail, to take time on a manual clock, or answer reads to miss.
///
/// `combinedCalls` chooses how the combined fetch-lock calls are made: `.native` forwards each as one call (as Redis
/// makes them), `.defaults` makes them from the single calls, one round trip each, the lock released when a later step
/// fails, as a store that cannot make them atomically does. The invalidation count and the fleet budget are forwarded
/// only when asked, as a store that does not keep them behaves.
package final class ScriptedGroupsCache: SharedGroupsCache, Sendable {
    package enum CombinedCalls: Sendable {
        case native
        case defaults
    }

    private struct Script {
        var recorded: [String] = []
        var failing: Set<String> = []
        var everyCallFails: AppStoreGroupsError?
        var delays: [String: Duration] = [:]
        var delay: Duration = .zero
        var missingAnswerReads = 0
    }

    package let inner: any SharedGroupsCache
    private let combinedCalls: CombinedCalls
    private let countsInvalidations: Bool
    package let forwardsBudget: Bool
    private let clock: ManualClock?
    private let script = Mutex(Script())

    /// - Parameters:
    ///   - inner: The cache every call goes to. Default: an in-memory one on `clock`.
    ///   - combinedCalls: How the combined fetch-lock calls are made. Default `.defaults`.
    ///   - countsInvalidations: Whether the invalidation count is forwarded (`nil` otherwise).
    ///   - forwardsBudget: Whether the cache gives a service the fleet budget
    ///     (``SharedCaches/init(testing:)`` leaves it out otherwise).
    ///   - clock: The clock scripted delays advance.
    package init(
        _ inner: (any SharedGroupsCache)? = nil,
        combinedCalls: CombinedCalls = .defaults,
        countsInvalidations: Bool = false,
        forwardsBudget: Bool = true,
        clock: ManualClock? = nil
    ) {
        self.inner = inner ?? InMemoryGroupsCache(now: { clock?.now() ?? Date() })
        self.combinedCalls = combinedCalls
        self.countsInvalidations = countsInvalidations
        self.forwardsBudget = forwardsBudget
        self.clock = clock
    }

    /// The calls so far, by name.
    package var calls: [String] { script.withLock { $0.recorded } }

    /// Forgets the calls so far.
    package func clearCalls() { script.withLock { $0.recorded.removeAll() } }

    /// Makes the named calls fail with `<name> failed` (after recording them).
    package func fail(_ names: Set<String>) { script.withLock { $0.failing = names } }

    /// Whether every call fails, with the text Redis gives an unknown command (naming the key).
    package var failsEveryCall: Bool {
        get { script.withLock { $0.everyCallFails != nil } }
        set { script.withLock { $0.everyCallFails = newValue ? Self.unknownCommand : nil } }
    }

    /// What Redis answers a command it does not know, naming the key (`KEY` in the message).
    private static let unknownCommand = AppStoreGroupsError(
        code: .sharedCacheFailure,
        message: "Redis at 127.0.0.1:6379 answered GET with an error: ERR unknown command 'GET', "
            + "with args beginning with: 'app:sandbox:groups:KEY'"
    )

    /// A cache that is always down: every call fails as a refused connection does.
    package static func unreachable() -> ScriptedGroupsCache {
        let cache = ScriptedGroupsCache(forwardsBudget: false)
        let refused = "Redis at 127.0.0.1:1: connection refused"
        cache.script.withLock { $0.everyCallFails = AppStoreGroupsError(code: .sharedCacheFailure, message: refused) }
        return cache
    }

    /// How long every call takes on the clock.
    package var delay: Duration {
        get { script.withLock { $0.delay } }
        set { script.withLock { $0.delay = newValue } }
    }

    /// Makes the named call take `duration` on the clock, whatever ``delay`` says.
    package func delay(_ name: String, by duration: Duration) { script.withLock { $0.delays[name] = duration } }

    /// Makes the next `count` answer reads find none, as reads just before another process stored its answer do.
    package func missAnswerReads(_ count: Int) { script.withLock { $0.missingAnswerReads = count } }

    private func record(_ name: String, key: String) throws(AppStoreGroupsError) {
        let (delay, everyCallFails, failsThis) = script.withLock { script in
            script.recorded.append(name)
            return (script.delays[name] ?? script.delay, script.everyCallFails, script.failing.contains(name))
        }
        if delay > .zero { clock?.advance(by: delay) }
        if var error = everyCallFails {
            error.message = error.message.replacingOccurrences(of: "KEY", with: key)
            throw error
        }
        if failsThis { throw AppStoreGroupsError(code: .sharedCacheFailure, message: "\(name) failed") }
    }

    package func answer(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> CachedGroupsAnswer? {
        try record("answer", key: customerID)
        let misses = script.withLock { script in
            defer { script.missingAnswerReads = max(0, script.missingAnswerReads - 1) }
            return script.missingAnswerReads > 0
        }
        if misses { return nil }
        return try await inner.answer(anyTransactionID: customerID, in: environment)
    }

    package func invalidationGeneration(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> InvalidationGeneration {
        try record("invalidationGeneration", key: customerID)
        return try await inner.invalidationGeneration(anyTransactionID: customerID, in: environment)
    }

    package func setAnswer(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> Bool {
        try record("setAnswerIfGeneration", key: write.customerID)
        return try await inner.setAnswer(write)
    }

    package func acquireFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> Bool {
        try record("acquireFetchLock", key: customerID)
        return try await inner.acquireFetchLockAndRead(
            anyTransactionID: customerID,
            in: environment,
            owner: owner,
            timeToLive: timeToLive
        ).acquired
    }

    package func releaseFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String
    ) async throws(AppStoreGroupsError) {
        try record("releaseFetchLock", key: customerID)
        try await inner.releaseFetchLock(anyTransactionID: customerID, in: environment, owner: owner)
    }

    package func acquireFetchLockAndRead(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> FetchLockAttempt {
        guard combinedCalls == .native else {
            let acquired = try await acquireFetchLock(
                anyTransactionID: customerID,
                in: environment,
                owner: owner,
                timeToLive: timeToLive
            )
            guard acquired else { return FetchLockAttempt(acquired: false, answer: nil, generation: nil) }
            do {
                let answer = try await answer(anyTransactionID: customerID, in: environment)
                let generation = try await invalidationGeneration(anyTransactionID: customerID, in: environment)
                return FetchLockAttempt(acquired: true, answer: answer, generation: generation)
            } catch {
                // The caller learns nothing of the lock from an error: it must not stay held.
                try? await releaseFetchLock(anyTransactionID: customerID, in: environment, owner: owner)
                throw error
            }
        }
        try record("acquireFetchLockAndRead", key: customerID)
        return try await inner.acquireFetchLockAndRead(
            anyTransactionID: customerID,
            in: environment,
            owner: owner,
            timeToLive: timeToLive
        )
    }

    package func setAnswer(
        _ write: AnswerWrite,
        releasingFetchLock owner: String
    ) async throws(AppStoreGroupsError)
        -> Bool
    {
        guard combinedCalls == .native else {
            let kept: Bool
            do {
                kept = try await setAnswer(write)
            } catch {
                try? await releaseFetchLock(anyTransactionID: write.customerID, in: write.environment, owner: owner)
                throw error
            }
            try await releaseFetchLock(anyTransactionID: write.customerID, in: write.environment, owner: owner)
            return kept
        }
        try record("setAnswerReleasingFetchLock", key: write.customerID)
        return try await inner.setAnswer(write, releasingFetchLock: owner)
    }

    package func rateLimitedUntil(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> Date? {
        try record("rateLimitedUntil", key: endpoint.name)
        return try await inner.rateLimitedUntil(endpoint, in: environment)
    }

    package func setRateLimitedUntil(
        _ instant: Date,
        for endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) {
        try record("setRateLimitedUntil", key: endpoint.name)
        try await inner.setRateLimitedUntil(instant, for: endpoint, in: environment)
    }

    package func takeBudgetToken(
        from budget: FleetBudget,
        maximumWait: Duration
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        try record("takeBudgetToken", key: budget.endpoint.name)
        return try await inner.takeBudgetToken(from: budget, maximumWait: maximumWait)
    }

    /// A token only when one is banked now, the reserve not kept: as a store that knows no reserve
    /// (the inner cache's answer when the budget is not given to a service).
    package func takeBudgetToken(
        from budget: FleetBudget,
        keeping reserve: Double
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        guard forwardsBudget else { return try await inner.takeBudgetToken(from: budget, keeping: reserve) }
        return try await takeBudgetToken(from: budget, maximumWait: .zero)
    }

    package func invalidate(anyTransactionID customerID: String) async throws(AppStoreGroupsError) {
        try record("invalidate", key: customerID)
        try await inner.invalidate(anyTransactionID: customerID)
    }

    package func invalidate(groupID: String) async throws(AppStoreGroupsError) {
        try record("invalidateGroup", key: groupID)
        try await inner.invalidate(groupID: groupID)
    }

    package func invalidateAll() async throws(AppStoreGroupsError) {
        try record("invalidateAll", key: "*")
        try await inner.invalidateAll()
    }

    package func invalidationCount() async throws(AppStoreGroupsError) -> UInt64? {
        guard countsInvalidations else { return nil }
        try record("invalidationCount", key: "*")
        return try await inner.invalidationCount()
    }

    /// The count, then the answer: two calls, as a store that cannot read both in one step.
    package func answerAndInvalidationCount(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> (answer: CachedGroupsAnswer?, invalidationCount: UInt64?) {
        let count = try await invalidationCount()
        return (try await answer(anyTransactionID: customerID, in: environment), count)
    }
}

extension SharedCaches {
    /// Every concern of `store`, none for `nil`; a scripted cache that forwards no budget gives none.
    package init(testing store: (any SharedGroupsCache)?) {
        self = store.map { SharedCaches($0) } ?? SharedCaches()
        if let scripted = store as? ScriptedGroupsCache, !scripted.forwardsBudget { fleetBudget = nil }
    }
}
