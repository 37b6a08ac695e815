import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy
import Synchronization

/// `InMemoryGroupsCache` as a store that can lose its keys, for ``FleetSimulation/Store/inMemory``:
/// one part holds the answers, locks, counts and `Retry-After` instants, another the budget, and
/// losing a key starts the part that holds it again, empty.
///
/// The package's tests give it other concerns to start (a broken one, or fewer), so that a concern
/// that mishandles a lost key shows; the store provides the concerns its parts provide.
///
/// The invalidation count read is the inner cache's plus a base drawn at random whenever the count
/// is lost, so a lost count never comes back to a value a process remembers (as a store that can
/// lose it must do). So is the generation's count of everyone's invalidations, whenever the
/// generations are lost (a flush, a restart): a write whose generation was read before the loss is
/// refused after it, as it would be had the store kept its counts, rather than kept because every
/// count reads 0 again. A restart also fails every call for a moment, as a server does while it
/// starts.
final class LosableInMemoryStore: SharedAnswerCache, SharedFetchLock, SharedRateLimitState, SharedFleetBudget,
    SharedInvalidations
{
    private struct State {
        var main: SharedCaches
        var budget: SharedCaches
        var base: UInt64 = 0
        /// Added to the generation's count of everyone's invalidations: drawn again when the
        /// generations are lost.
        var generationBase: UInt64 = 0
        var downUntil: Date?
        var random = SystemRandomNumberGenerator()
    }

    private let state: Mutex<State>
    private let now: @Sendable () -> Date
    private let make: @Sendable () -> SharedCaches

    /// A store on the clock `now` whose parts `make` starts, empty (default every concern of an
    /// `InMemoryGroupsCache`).
    init(
        now: @escaping @Sendable () -> Date,
        make: (@Sendable (_ now: @escaping @Sendable () -> Date) -> SharedCaches)? = nil
    ) {
        self.now = now
        let start: @Sendable () -> SharedCaches = { make?(now) ?? SharedCaches(InMemoryGroupsCache(now: now)) }
        self.make = start
        state = Mutex(State(main: start(), budget: start()))
    }

    /// A count base no count started at 0 reaches: 2^32 to 2^52.
    private static func freshBase(_ random: inout SystemRandomNumberGenerator) -> UInt64 {
        UInt64.random(in: (1 << 32)...(1 << 52), using: &random)
    }

    /// Forgets everything; with `restarting`, calls fail for the next 300 ms.
    func flush(restarting: Bool) {
        let now = now()
        let fresh = make
        state.withLock { state in
            state.main = fresh()
            state.budget = fresh()
            state.base = Self.freshBase(&state.random)
            state.generationBase = Self.freshBase(&state.random)
            if restarting { state.downUntil = now.addingTimeInterval(0.3) }
        }
    }

    /// Forgets the budget: the next token comes from a new bucket.
    func loseBudget() {
        let fresh = make()
        state.withLock { $0.budget = fresh }
    }

    /// Forgets the invalidation count: it starts again at a random value.
    func loseInvalidationCount() {
        state.withLock { $0.base = Self.freshBase(&$0.random) }
    }

    /// The concerns this store provides: those its parts provide, all through this one object.
    var concerns: SharedCaches {
        let (main, budget) = state.withLock { ($0.main, $0.budget) }
        return SharedCaches(
            answers: main.answers.map { _ in self },
            fetchLock: main.fetchLock.map { _ in self },
            rateLimits: main.rateLimits.map { _ in self },
            fleetBudget: budget.fleetBudget.map { _ in self },
            invalidations: main.invalidations.map { _ in self }
        )
    }

    /// Forgets one answer.
    func loseAnswer(customerID: String, in environment: StoreEnvironment) async throws {
        let main = try caches().answers
        let empty = CachedGroupsAnswer(kind: .notFound, body: [], fetchedAt: now())
        // A time to live of zero removes the answer.
        let generation = try await main.invalidationGeneration(anyTransactionID: customerID, in: environment)
        let write = AnswerWrite(
            empty,
            anyTransactionID: customerID,
            in: environment,
            timeToLive: .zero,
            groupIDs: [],
            ifGeneration: generation
        )
        _ = try await main.setAnswer(write)
    }

    /// The parts now, and the bases their counts are shown under.
    private struct Parts {
        var main: SharedCaches
        var budget: SharedCaches
        var base: UInt64
        var generationBase: UInt64

        var answers: any SharedAnswerCache { get throws(AppStoreGroupsError) { try Self.provided(main.answers) } }
        var fetchLock: any SharedFetchLock { get throws(AppStoreGroupsError) { try Self.provided(main.fetchLock) } }
        var rateLimits: any SharedRateLimitState {
            get throws(AppStoreGroupsError) { try Self.provided(main.rateLimits) }
        }
        var fleetBudget: any SharedFleetBudget {
            get throws(AppStoreGroupsError) { try Self.provided(budget.fleetBudget) }
        }
        var invalidations: any SharedInvalidations {
            get throws(AppStoreGroupsError) { try Self.provided(main.invalidations) }
        }

        /// A concern of a part, or a failure for one it does not provide (which ``concerns`` does
        /// not offer either).
        private static func provided<Concern>(_ concern: Concern?) throws(AppStoreGroupsError) -> Concern {
            guard let concern else {
                throw AppStoreGroupsError(
                    code: .sharedCacheFailure,
                    message: "the simulated store keeps no such concern"
                )
            }
            return concern
        }
    }

    /// The parts now, or a failure while the store restarts.
    private func caches() throws(AppStoreGroupsError) -> Parts {
        let now = now()
        let caches = state.withLock { state -> Parts? in
            if let until = state.downUntil, now < until { return nil }
            return Parts(main: state.main, budget: state.budget, base: state.base, generationBase: state.generationBase)
        }
        guard let caches else {
            throw AppStoreGroupsError(code: .sharedCacheFailure, message: "the simulated store is restarting")
        }
        return caches
    }

    func answer(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> CachedGroupsAnswer? {
        try await caches().answers.answer(anyTransactionID: customerID, in: environment)
    }

    func invalidationGeneration(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> InvalidationGeneration {
        let parts = try caches()
        let generationBase = parts.generationBase
        let main = try parts.answers
        let generation = try await main.invalidationGeneration(anyTransactionID: customerID, in: environment)
        return Self.shown(generation, generationBase)
    }

    func setAnswer(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> Bool {
        let parts = try caches()
        let generationBase = parts.generationBase
        let main = try parts.answers
        return try await main.setAnswer(Self.kept(write, generationBase))
    }

    /// A generation as this store shows it: everyone's count plus the base.
    private static func shown(_ generation: InvalidationGeneration, _ base: UInt64) -> InvalidationGeneration {
        var shown = generation
        shown.all = generation.all &+ base
        return shown
    }

    /// A write as the inner cache judges it: read under another base (before the generations were
    /// lost), its count of everyone's invalidations matches none the inner cache has.
    private static func kept(_ write: AnswerWrite, _ base: UInt64) -> AnswerWrite {
        var kept = write
        kept.generation.all = write.generation.all &- base
        return kept
    }

    func releaseFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String
    ) async throws(AppStoreGroupsError) {
        try await caches().fetchLock.releaseFetchLock(anyTransactionID: customerID, in: environment, owner: owner)
    }

    func acquireFetchLockAndRead(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> FetchLockAttempt {
        let parts = try caches()
        let generationBase = parts.generationBase
        let main = try parts.fetchLock
        var attempt = try await main.acquireFetchLockAndRead(
            anyTransactionID: customerID,
            in: environment,
            owner: owner,
            timeToLive: timeToLive
        )
        attempt.generation = attempt.generation.map { Self.shown($0, generationBase) }
        return attempt
    }

    func setAnswer(_ write: AnswerWrite, releasingFetchLock owner: String) async throws(AppStoreGroupsError) -> Bool {
        let parts = try caches()
        let generationBase = parts.generationBase
        let main = try parts.fetchLock
        return try await main.setAnswer(Self.kept(write, generationBase), releasingFetchLock: owner)
    }

    func rateLimitedUntil(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> Date? {
        try await caches().rateLimits.rateLimitedUntil(endpoint, in: environment)
    }

    func setRateLimitedUntil(
        _ instant: Date,
        for endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) {
        try await caches().rateLimits.setRateLimitedUntil(instant, for: endpoint, in: environment)
    }

    func takeBudgetToken(
        from budget: FleetBudget,
        maximumWait: Duration
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        try await caches().fleetBudget.takeBudgetToken(from: budget, maximumWait: maximumWait)
    }

    func takeBudgetToken(
        from budget: FleetBudget,
        keeping reserve: Double
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        try await caches().fleetBudget.takeBudgetToken(from: budget, keeping: reserve)
    }

    func invalidate(anyTransactionID customerID: String) async throws(AppStoreGroupsError) {
        try await caches().invalidations.invalidate(anyTransactionID: customerID)
    }

    func invalidate(groupID: String) async throws(AppStoreGroupsError) {
        try await caches().invalidations.invalidate(groupID: groupID)
    }

    func invalidateAll() async throws(AppStoreGroupsError) {
        try await caches().invalidations.invalidateAll()
    }

    func invalidationCount() async throws(AppStoreGroupsError) -> UInt64? {
        let parts = try caches()
        let base = parts.base
        let main = try parts.invalidations
        return try await main.invalidationCount().map { $0 &+ base }
    }

    func answerAndInvalidationCount(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> (answer: CachedGroupsAnswer?, invalidationCount: UInt64?) {
        let parts = try caches()
        let base = parts.base
        let main = try parts.invalidations
        let read = try await main.answerAndInvalidationCount(anyTransactionID: customerID, in: environment)
        return (read.answer, read.invalidationCount.map { $0 &+ base })
    }
}
