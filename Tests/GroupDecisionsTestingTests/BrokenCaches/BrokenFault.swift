import AppStoreGroups
import Foundation
import GroupDecisions
import GroupDecisionsTesting
import GroupPolicy

/// One plausible way a store breaks a guarantee `GroupDecisionService` relies on.
///
/// One customer served another's answer, a revoked answer served after its invalidation returned, the fleet above its
/// budget, a lock nobody can take: what a conformance suite or a fleet simulation must reject. Each breaks one concern,
/// in the wrapper of that concern ``BrokenStore`` gives.
enum BrokenFault: String, Sendable, CaseIterable {
    // Answers, the fetch lock and invalidations: `BrokenCache`.
    case answerOfLastWrite  // `answerAndInvalidationCount` gives the answer written last when it has none.
    case caseInsensitiveKeys  // Customer ids are compared case-insensitively: `admin1` reads `ADMIN1`'s answer.
    case frozenCount  // The invalidation count never moves after its first read.
    case lockFreeWriteIgnoresGeneration  // The lock-free `setAnswer(_:)` keeps the answer whatever the generation.
    case normalizationFoldingKeys  // Customer ids are folded to NFKC: `é` and `e` with an accent are one customer.
    case sharesEnvironments  // An answer is read from the sandbox's slot whatever the environment asked for.
    case ignoresGenerations  // Both writes keep the answer whatever the generation.
    case writeIgnoresGroups  // A write keeps an answer holding a group invalidated after its generation.
    case releasesAnyOwner  // Releasing a lock frees it whoever holds it.
    case lockNeverExpires  // A lock never expires: a holder that dies blocks the customer for good.
    case refusedWriteKeepsLock  // The combined write does not release the lock when it refuses the answer.
    case answersNeverExpire  // Answers never expire.
    case customerKeepsProduction  // `invalidate(anyTransactionID:)` forgets the sandbox answer only.
    case groupKeepsAnswers  // `invalidate(groupID:)` counts and moves the generation, but forgets no answer.
    case groupIndexMissesProduction  // `invalidate(groupID:)` forgets the answers holding it in the sandbox only.
    case everyoneKeepsAnswers  // `invalidateAll()` counts and moves the generation, but forgets no answer.
    case countPerInstance  // Each instance counts the invalidations made through it, not another process's.
    case countRestartsFromZero  // At its third invalidation the store loses its count and counts again from 0.
    case combinedReadDropsCount  // `answerAndInvalidationCount` answers no count; `invalidationCount()` keeps one.

    // Rate limits: `BrokenRateLimits`.
    case keepsLastInstant  // The latest `Retry-After` instant set wins, even when earlier than the one kept.
    case truncatesRetryAfter  // A `Retry-After` instant is kept rounded down to the second: requests go before it.

    // The fleet budget: `BrokenBudget`.
    case budgetPerMillisecond  // The budget refills per millisecond: a thousand times its rate.
    case refreshAlwaysGranted  // `takeBudgetToken(from:keeping:)` always grants a token, at once.
    case endlessBudget  // `takeBudgetToken(from:maximumWait:)` always grants a token, at once.
    case reservesWithoutWait  // A token reserved ahead is granted with no wait: its caller sends at once.
    case refreshIgnoresReserve  // `takeBudgetToken(from:keeping:)` ignores the reserve.
    case budgetPerInstance  // Each instance keeps a budget of its own: a fleet of N spends N budgets.
    case budgetStartsFull  // A new (or lost) bucket starts full whatever the budget's initial tokens.
    case oneBudgetForAll  // One budget for every endpoint and environment.

    /// The wrappers of ``BrokenStore``, by the concerns they keep.
    enum Concern: Sendable, CaseIterable {
        /// Answers, the fetch lock and invalidations (`BrokenCache`).
        case answers
        case rateLimits
        case fleetBudget
    }

    /// The concern the fault breaks.
    var concern: Concern {
        switch self {
        case .keepsLastInstant, .truncatesRetryAfter: .rateLimits
        case .budgetPerMillisecond, .refreshAlwaysGranted, .endlessBudget, .reservesWithoutWait,
            .refreshIgnoresReserve, .budgetPerInstance, .budgetStartsFull, .oneBudgetForAll:
            .fleetBudget
        default: .answers
        }
    }
}

/// An in-memory store whose concerns go through the wrappers that break them: one concern broken
/// by the fault, the others the in-memory cache's behaviour.
struct BrokenStore: Sendable {
    let cache: BrokenCache
    let rateLimits: BrokenRateLimits
    let budget: BrokenBudget

    /// A store broken by `fault` (`nil`: by none, which passes every check), on the clock `now`.
    init(_ fault: BrokenFault?, now: @escaping @Sendable () -> Date = { Date() }) {
        let inner = InMemoryGroupsCache(now: now)
        cache = BrokenCache(fault, inner: inner)
        rateLimits = BrokenRateLimits(fault: fault, inner: inner)
        budget = BrokenBudget(fault: fault, inner: inner, now: now)
    }

    private init(cache: BrokenCache, rateLimits: BrokenRateLimits, budget: BrokenBudget) {
        self.cache = cache
        self.rateLimits = rateLimits
        self.budget = budget
    }

    /// Another instance over the same storage, as a second process would open it.
    func secondInstance() -> BrokenStore {
        BrokenStore(cache: cache.secondInstance(), rateLimits: rateLimits, budget: budget.secondInstance())
    }

    /// Every concern: answers, the fetch lock and invalidations from one object.
    var caches: SharedCaches { caches(Set(BrokenFault.Concern.allCases)) }

    /// The concerns of the wrappers `concerns` names.
    func caches(_ concerns: Set<BrokenFault.Concern>) -> SharedCaches {
        let answers = concerns.contains(.answers) ? cache : nil
        return SharedCaches(
            answers: answers,
            fetchLock: answers,
            rateLimits: concerns.contains(.rateLimits) ? rateLimits : nil,
            fleetBudget: concerns.contains(.fleetBudget) ? budget : nil,
            invalidations: answers
        )
    }

    /// A suite over broken stores, on their own clock or (`onSuiteClock`) on the suite's.
    static func conformance(
        _ fault: BrokenFault?,
        onSuiteClock: Bool,
        concerns: @escaping @Sendable (BrokenStore) -> SharedCaches = { $0.caches }
    ) -> SharedGroupsCacheConformance {
        guard onSuiteClock else {
            return SharedGroupsCacheConformance(
                concerns: concerns,
                makeSecondInstance: { $0.secondInstance() },
                makeStore: { BrokenStore(fault) }
            )
        }
        return SharedGroupsCacheConformance(
            concerns: concerns,
            makeSecondInstance: { $0.secondInstance() },
            makeStore: { clock in BrokenStore(fault, now: clock.now) }
        )
    }
}

/// Rate limits broken by ``BrokenFault/keepsLastInstant`` or ``BrokenFault/truncatesRetryAfter``.
struct BrokenRateLimits: SharedRateLimitState {
    let fault: BrokenFault?
    let inner: InMemoryGroupsCache

    func rateLimitedUntil(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> Date? {
        try await inner.rateLimitedUntil(endpoint, in: environment)
    }

    func setRateLimitedUntil(
        _ instant: Date,
        for endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) {
        var instant = instant
        switch fault {
        case .keepsLastInstant: inner.removeRateLimit(endpoint, in: environment)
        case .truncatesRetryAfter: instant = Date(timeIntervalSince1970: instant.timeIntervalSince1970.rounded(.down))
        default: break
        }
        try await inner.setRateLimitedUntil(instant, for: endpoint, in: environment)
    }
}

/// The fleet budget broken by one of the budget's faults.
struct BrokenBudget: SharedFleetBudget {
    let fault: BrokenFault?
    let inner: InMemoryGroupsCache
    /// Where this instance takes tokens: the storage's cache, or (``BrokenFault/budgetPerInstance``) its own.
    let budgets: InMemoryGroupsCache
    private let now: @Sendable () -> Date

    init(fault: BrokenFault?, inner: InMemoryGroupsCache, now: @escaping @Sendable () -> Date) {
        self.fault = fault
        self.inner = inner
        budgets = fault == .budgetPerInstance ? InMemoryGroupsCache(now: now) : inner
        self.now = now
    }

    /// Another instance over the same storage.
    func secondInstance() -> BrokenBudget { BrokenBudget(fault: fault, inner: inner, now: now) }

    /// The budget this instance takes a token from instead of `budget`.
    private func bucket(_ budget: FleetBudget) -> FleetBudget {
        var bucket = budget
        if fault == .oneBudgetForAll {
            bucket.endpoint = .customerGroups
            bucket.environment = .sandbox
        }
        if fault == .budgetPerMillisecond { bucket.ratePerSecond *= 1000 }
        if fault == .budgetStartsFull { bucket.initialTokens = bucket.burst }
        return bucket
    }

    func takeBudgetToken(
        from budget: FleetBudget,
        maximumWait: Duration
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        if fault == .endlessBudget { return .taken(wait: .zero) }
        let token = try await budgets.takeBudgetToken(from: bucket(budget), maximumWait: maximumWait)
        if fault == .reservesWithoutWait, case .taken = token { return .taken(wait: .zero) }
        return token
    }

    func takeBudgetToken(
        from budget: FleetBudget,
        keeping reserve: Double
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        switch fault {
        case .endlessBudget, .refreshAlwaysGranted: .taken(wait: .zero)
        case .refreshIgnoresReserve: try await budgets.takeBudgetToken(from: bucket(budget), keeping: 0)
        default: try await budgets.takeBudgetToken(from: bucket(budget), keeping: reserve)
        }
    }
}
