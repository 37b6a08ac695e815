import AppStoreGroups
import Foundation
import GroupDecisions
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Synchronization

/// An `InMemoryGroupsCache` broken in one plausible way: what a conformance suite or a fleet
/// simulation must reject.
///
/// Every fault breaks a guarantee `GroupDecisionService` relies on (one customer served another's
/// answer, a revoked answer served after its invalidation returned, the fleet above its budget, a
/// lock nobody can take), and everything else is the in-memory cache's behaviour: the combined
/// calls are its atomic ones unless the fault is in them. ``secondInstance()`` opens another
/// instance over the same storage, as a second process of a fleet would; the state a fault keeps
/// is the storage's, except where the fault is that an instance keeps its own.
///
/// ```swift
/// let cache = BrokenCache(.caseInsensitiveKeys, now: clock.now)
/// ```
final class BrokenCache: SharedGroupsCache, SingleCallFetchLock, Sendable {
    enum Fault: String, Sendable, CaseIterable, CustomStringConvertible {
        // The six of the adversarial pass.

        /// `answerAndInvalidationCount` gives the answer written last (for any customer) when it has
        /// none for this customer.
        case answerOfLastWrite
        /// Customer ids are compared case-insensitively: `admin1` reads `ADMIN1`'s answer.
        case caseInsensitiveKeys
        /// The invalidation count never moves after its first read.
        case frozenCount
        /// The lock-free `setAnswer(_ write:)` keeps the answer whatever the generation (the
        /// combined write is right).
        case lockFreeWriteIgnoresGeneration
        /// The budget refills per millisecond: a thousand times its rate.
        case budgetPerMillisecond
        /// `takeBudgetToken(from:keeping:)` always grants a token, at once.
        case refreshAlwaysGranted

        // More.

        /// Customer ids are folded to Unicode's compatibility composition (NFKC): `é` written as one
        /// scalar and as `e` with a combining accent are one customer.
        case normalizationFoldingKeys
        /// An answer is read from the sandbox's slot whatever the environment asked for.
        case sharesEnvironments
        /// Both writes keep the answer whatever the generation.
        case ignoresGenerations
        /// A write keeps an answer holding a group invalidated after its generation (only the
        /// customer's and everyone's counts are compared).
        case writeIgnoresGroups
        /// Releasing a lock frees it whoever holds it.
        case releasesAnyOwner
        /// A lock never expires: a holder that dies blocks the customer for good.
        case lockNeverExpires
        /// The combined write does not release the lock when it refuses the answer.
        case refusedWriteKeepsLock
        /// Answers never expire.
        case answersNeverExpire
        /// The latest `Retry-After` instant set wins, even when earlier than the one kept.
        case keepsLastInstant
        /// A `Retry-After` instant is kept rounded down to the whole second: requests go before it.
        case truncatesRetryAfter
        /// `takeBudgetToken(from:maximumWait:)` always grants a token, at once.
        case endlessBudget
        /// A token reserved ahead is granted with no wait: its caller sends at once.
        case reservesWithoutWait
        /// `takeBudgetToken(from:keeping:)` ignores the reserve.
        case refreshIgnoresReserve
        /// Each instance keeps a budget of its own: a fleet of N spends N budgets.
        case budgetPerInstance
        /// A new (or lost) bucket starts full whatever the budget's initial tokens: a lost bucket
        /// lets a whole burst through on top of the reservations it forgot.
        case budgetStartsFull
        /// One budget for every endpoint and environment.
        case oneBudgetForAll
        /// `invalidate(anyTransactionID:)` forgets the sandbox answer only.
        case customerKeepsProduction
        /// `invalidate(groupID:)` counts and moves the generation, but forgets no answer.
        case groupKeepsAnswers
        /// `invalidate(groupID:)` forgets the answers holding the group in the sandbox only: the
        /// group index misses the second environment.
        case groupIndexMissesProduction
        /// `invalidateAll()` counts and moves the generation, but forgets no answer.
        case everyoneKeepsAnswers
        /// Each instance counts the invalidations made through it: another process's invalidation
        /// never moves this one's count.
        case countPerInstance
        /// The count goes back after a restart: at its third invalidation the store loses its count
        /// and counts again from 0, through values already read.
        case countRestartsFromZero
        /// `answerAndInvalidationCount` answers no count (`nil`, "the store keeps none") while
        /// `invalidationCount()` keeps one.
        case combinedReadDropsCount

        var description: String { rawValue }
    }

    /// The fault, or `nil` for ``withoutFault(now:)``.
    let fault: Fault?
    let inner: InMemoryGroupsCache
    private let storage: Storage
    /// Where this instance takes budget tokens: the storage's cache, or (``Fault/budgetPerInstance``)
    /// its own.
    private let budgets: InMemoryGroupsCache
    /// The invalidations made through this instance (``Fault/countPerInstance``).
    private let ownInvalidations = Mutex<UInt64>(0)

    /// What every instance over one storage shares, beyond the in-memory cache.
    private final class Storage: Sendable {
        struct State {
            /// Every customer and environment written, so that a fault can put their answers back.
            var written: Set<Slot> = []
            /// Every owner that asked for each lock.
            var owners: [Slot: Set<String>] = [:]
            /// The answer written last, for any customer.
            var lastWritten: CachedGroupsAnswer?
            /// The count read first (``Fault/frozenCount``).
            var frozenCount: UInt64?
            /// What the count read back lost at the restart (``Fault/countRestartsFromZero``).
            var countLost: UInt64 = 0
            var invalidations = 0
        }

        let state = Mutex(State())
    }

    struct Slot: Hashable, Sendable {
        var customerID: String
        var environment: StoreEnvironment
    }

    /// A cache broken by `fault`, over an empty in-memory cache on the clock `now`.
    convenience init(_ fault: Fault, now: @escaping @Sendable () -> Date = { Date() }) {
        self.init(fault: fault, now: now)
    }

    /// The cache every fault departs from: the in-memory cache with customer ids kept byte for byte,
    /// which passes every check.
    ///
    /// - Parameters:
    ///   - now: The clock.
    ///   - combinedCallsInSteps: Whether the combined fetch-lock calls are made of the single ones
    ///     (`acquireFetchLockAndReadInSteps`, `setAnswerInSteps`), as a store that cannot make them
    ///     atomically does. Default `false`: the in-memory cache's atomic ones.
    /// - Returns: An empty cache.
    static func withoutFault(
        now: @escaping @Sendable () -> Date = { Date() },
        combinedCallsInSteps: Bool = false
    ) -> BrokenCache {
        BrokenCache(fault: nil, now: now, combinedCallsInSteps: combinedCallsInSteps)
    }

    private init(fault: Fault?, now: @escaping @Sendable () -> Date, combinedCallsInSteps: Bool = false) {
        self.fault = fault
        inner = InMemoryGroupsCache(now: now)
        storage = Storage()
        budgets = inner
        self.now = now
        self.combinedCallsInSteps = combinedCallsInSteps
    }

    private init(sharing other: BrokenCache) {
        fault = other.fault
        inner = other.inner
        storage = other.storage
        now = other.now
        combinedCallsInSteps = other.combinedCallsInSteps
        budgets = other.fault == .budgetPerInstance ? InMemoryGroupsCache(now: other.now) : other.inner
    }

    /// Whether the combined fetch-lock calls are made of the single ones.
    let combinedCallsInSteps: Bool

    private let now: @Sendable () -> Date

    /// Another instance over the same storage, as a second process would open it.
    func secondInstance() -> BrokenCache { BrokenCache(sharing: self) }

    /// ``secondInstance()`` of a broken cache, for `SharedGroupsCacheConformance`'s
    /// `makeSecondInstance` (any other cache is its own).
    static let openSecondInstance: @Sendable (any SharedGroupsCache) async throws -> any SharedGroupsCache = {
        ($0 as? BrokenCache)?.secondInstance() ?? $0
    }

    /// The key a customer id is kept under: the id as the fault folds it, then escaped (every
    /// scalar outside ASCII written `\u{…}`), so that the in-memory cache, which compares ids as
    /// Swift strings (canonically equivalent ids are one), keeps them byte for byte and the fault is
    /// the only one.
    private func key(_ customerID: String) -> String {
        let folded =
            switch fault {
            case .caseInsensitiveKeys: customerID.lowercased()
            case .normalizationFoldingKeys: customerID.precomposedStringWithCompatibilityMapping
            default: customerID
            }
        var escaped = ""
        for scalar in folded.unicodeScalars {
            if scalar.isASCII, scalar != "\\" {
                escaped.unicodeScalars.append(scalar)
            } else {
                escaped += "\\u{\(String(scalar.value, radix: 16))}"
            }
        }
        return escaped
    }

    /// The environment whose slot an answer is read from.
    private func readEnvironment(_ environment: StoreEnvironment) -> StoreEnvironment {
        fault == .sharesEnvironments ? .sandbox : environment
    }

    private func remember(_ customerID: String, _ environment: StoreEnvironment, _ answer: CachedGroupsAnswer) {
        storage.state.withLock {
            $0.written.insert(Slot(customerID: customerID, environment: environment))
            $0.lastWritten = answer
        }
    }

    /// The write this cache makes of `write`: its key, a lifetime, and generations as the fault has it.
    private func adjusted(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> AnswerWrite {
        var adjusted = write
        adjusted.customerID = key(write.customerID)
        if fault == .answersNeverExpire { adjusted.timeToLive = Self.forever }
        if fault == .writeIgnoresGroups {
            let current = try await inner.invalidationGeneration(
                anyTransactionID: adjusted.customerID,
                in: adjusted.environment
            )
            adjusted.generation.groups = current.groups
        }
        return adjusted
    }

    /// A hundred years: longer than any test.
    private static let forever = Duration.seconds(100 * 365 * 86_400)

    /// Runs `invalidation`, then puts back the answers of `keep` it removed.
    private func keepingAnswers(
        of keep: (Slot) -> Bool,
        _ invalidation: () async throws(AppStoreGroupsError) -> Void
    ) async throws(AppStoreGroupsError) {
        var saved: [(Slot, CachedGroupsAnswer)] = []
        for slot in storage.state.withLock({ Array($0.written) }) where keep(slot) {
            if let answer = try await inner.answer(anyTransactionID: slot.customerID, in: slot.environment) {
                saved.append((slot, answer))
            }
        }
        try await invalidation()
        for (slot, answer) in saved {
            try await inner.setAnswer(
                answer,
                anyTransactionID: slot.customerID,
                in: slot.environment,
                timeToLive: .seconds(3600)
            )
        }
        try await countInvalidation()
    }

    private func countInvalidation() async throws(AppStoreGroupsError) {
        ownInvalidations.withLock { $0 += 1 }
        let restarts = storage.state.withLock { state in
            state.invalidations += 1
            return state.invalidations == 3
        }
        guard fault == .countRestartsFromZero, restarts, let lost = try await inner.invalidationCount() else { return }
        // The store lost its count and starts again from 0.
        storage.state.withLock { $0.countLost = lost }
    }

    /// The count as this cache reports it, of the in-memory cache's `count`.
    private func reported(_ count: UInt64?) -> UInt64? {
        guard let count else { return nil }
        switch fault {
        case .frozenCount:
            return storage.state.withLock { state in
                if state.frozenCount == nil { state.frozenCount = count }
                return state.frozenCount
            }
        case .countPerInstance:
            return ownInvalidations.withLock { $0 }
        case .countRestartsFromZero:
            return count - storage.state.withLock { $0.countLost }
        default:
            return count
        }
    }

    /// The budget this cache takes a token from instead of `budget`.
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

    // MARK: SharedAnswerCache

    func answer(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> CachedGroupsAnswer? {
        try await inner.answer(anyTransactionID: key(customerID), in: readEnvironment(environment))
    }

    func invalidationGeneration(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> InvalidationGeneration {
        try await inner.invalidationGeneration(anyTransactionID: key(customerID), in: environment)
    }

    func setAnswer(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> Bool {
        let write = try await adjusted(write)
        guard fault == .ignoresGenerations || fault == .lockFreeWriteIgnoresGeneration else {
            let kept = try await inner.setAnswer(write)
            if kept { remember(write.customerID, write.environment, write.answer) }
            return kept
        }
        try await inner.setAnswer(
            write.answer,
            anyTransactionID: write.customerID,
            in: write.environment,
            timeToLive: write.timeToLive
        )
        remember(write.customerID, write.environment, write.answer)
        return true
    }

    // MARK: SharedFetchLock

    func acquireFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> Bool {
        rememberOwner(owner, of: key(customerID), environment)
        return try await inner.acquireFetchLock(
            anyTransactionID: key(customerID),
            in: environment,
            owner: owner,
            timeToLive: fault == .lockNeverExpires ? Self.forever : timeToLive
        )
    }

    private func rememberOwner(_ owner: String, of customerID: String, _ environment: StoreEnvironment) {
        _ = storage.state.withLock {
            $0.owners[Slot(customerID: customerID, environment: environment), default: []].insert(owner)
        }
    }

    func releaseFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String
    ) async throws(AppStoreGroupsError) {
        try await release(key(customerID), in: environment, owner: owner)
    }

    /// Releases the lock of the customer kept under `key`, as the fault has it.
    private func release(
        _ key: String,
        in environment: StoreEnvironment,
        owner: String
    ) async throws(AppStoreGroupsError) {
        guard fault == .releasesAnyOwner else {
            return try await inner.releaseFetchLock(anyTransactionID: key, in: environment, owner: owner)
        }
        let slot = Slot(customerID: key, environment: environment)
        for holder in storage.state.withLock({ $0.owners[slot] ?? [] }) {
            try await inner.releaseFetchLock(anyTransactionID: key, in: environment, owner: holder)
        }
    }

    func acquireFetchLockAndRead(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> FetchLockAttempt {
        if combinedCallsInSteps {
            return try await acquireFetchLockAndReadInSteps(
                anyTransactionID: customerID,
                in: environment,
                owner: owner,
                timeToLive: timeToLive
            )
        }
        rememberOwner(owner, of: key(customerID), environment)
        var attempt = try await inner.acquireFetchLockAndRead(
            anyTransactionID: key(customerID),
            in: environment,
            owner: owner,
            timeToLive: fault == .lockNeverExpires ? Self.forever : timeToLive
        )
        if fault == .sharesEnvironments {
            attempt.answer = try await inner.answer(anyTransactionID: key(customerID), in: .sandbox)
        }
        return attempt
    }

    func setAnswer(_ write: AnswerWrite, releasingFetchLock owner: String) async throws(AppStoreGroupsError) -> Bool {
        if combinedCallsInSteps { return try await setAnswerInSteps(write, releasingFetchLock: owner) }
        let write = try await adjusted(write)
        switch fault {
        case .ignoresGenerations:
            try await release(write.customerID, in: write.environment, owner: owner)
            try await inner.setAnswer(
                write.answer,
                anyTransactionID: write.customerID,
                in: write.environment,
                timeToLive: write.timeToLive
            )
            remember(write.customerID, write.environment, write.answer)
            return true
        case .refusedWriteKeepsLock:
            let kept = try await inner.setAnswer(write)
            if kept {
                remember(write.customerID, write.environment, write.answer)
                try await release(write.customerID, in: write.environment, owner: owner)
            }
            return kept
        case .releasesAnyOwner:
            let kept = try await inner.setAnswer(write)
            if kept { remember(write.customerID, write.environment, write.answer) }
            try await release(write.customerID, in: write.environment, owner: owner)
            return kept
        default:
            let kept = try await inner.setAnswer(write, releasingFetchLock: owner)
            if kept { remember(write.customerID, write.environment, write.answer) }
            return kept
        }
    }

    // MARK: SharedRateLimitState

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
        case .endlessBudget, .refreshAlwaysGranted: return .taken(wait: .zero)
        case .refreshIgnoresReserve: return try await budgets.takeBudgetToken(from: bucket(budget), keeping: 0)
        default: return try await budgets.takeBudgetToken(from: bucket(budget), keeping: reserve)
        }
    }

    // MARK: SharedInvalidations

    func invalidate(anyTransactionID customerID: String) async throws(AppStoreGroupsError) {
        let customerID = key(customerID)
        let keepsProduction = fault == .customerKeepsProduction
        let keep: (Slot) -> Bool = {
            keepsProduction && $0.customerID == customerID && $0.environment == .production
        }
        try await keepingAnswers(of: keep) { () throws(AppStoreGroupsError) in
            try await inner.invalidate(anyTransactionID: customerID)
        }
    }

    func invalidate(groupID: String) async throws(AppStoreGroupsError) {
        let fault = fault
        let keep: (Slot) -> Bool = {
            fault == .groupKeepsAnswers || (fault == .groupIndexMissesProduction && $0.environment == .production)
        }
        try await keepingAnswers(of: keep) { () throws(AppStoreGroupsError) in
            try await inner.invalidate(groupID: groupID)
        }
    }

    func invalidateAll() async throws(AppStoreGroupsError) {
        let keeps = fault == .everyoneKeepsAnswers
        let keep: (Slot) -> Bool = { _ in keeps }
        try await keepingAnswers(of: keep) { () throws(AppStoreGroupsError) in try await inner.invalidateAll() }
    }

    func invalidationCount() async throws(AppStoreGroupsError) -> UInt64? {
        reported(try await inner.invalidationCount())
    }

    func answerAndInvalidationCount(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> (answer: CachedGroupsAnswer?, invalidationCount: UInt64?) {
        var read = try await inner.answerAndInvalidationCount(
            anyTransactionID: key(customerID),
            in: readEnvironment(environment)
        )
        if fault == .answerOfLastWrite, read.answer == nil { read.answer = storage.state.withLock { $0.lastWritten } }
        return (read.answer, fault == .combinedReadDropsCount ? nil : reported(read.invalidationCount))
    }
}
