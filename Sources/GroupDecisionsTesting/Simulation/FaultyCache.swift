import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy
import Synchronization

/// One service's way to the shared store in a fleet simulation: each concern the store provides,
/// itself while the service is healthy, or through the fault the script gave the service (cut off,
/// slow, flapping).
///
/// Every call is counted by the clock while the store works on it (a store across a network takes
/// real time, during which the simulation's clock must not move).
final class FaultyCache: SharedAnswerCache, SharedFetchLock, SharedRateLimitState, SharedFleetBudget,
    SharedInvalidations
{
    /// What this service's calls go through.
    enum Mode: Sendable, Equatable {
        case healthy
        /// Every call fails; after the store's timeout (250 ms) when `timesOut`.
        case cutOff(timesOut: Bool)
        /// Every call takes 200 ms more.
        case slow
        /// A third of the calls fail before the store acted, a third after (the reply lost).
        case flapping
    }

    /// One service's fault, which every wrapper of its concerns goes through.
    final class Fault: Sendable {
        fileprivate struct State {
            var mode = Mode.healthy
            var random: SimulationRandom
        }

        fileprivate let state: Mutex<State>

        init(random: SimulationRandom) {
            state = Mutex(State(random: random))
        }

        /// The fault this service's calls go through now.
        var mode: Mode {
            get { state.withLock { $0.mode } }
            set { state.withLock { $0.mode = newValue } }
        }
    }

    private let inner: SharedCaches
    private let clock: SimulationClock
    private let fault: Fault

    private init(_ inner: SharedCaches, clock: SimulationClock, fault: Fault) {
        self.inner = inner
        self.clock = clock
        self.fault = fault
    }

    /// The concerns of `caches` as one service reaches them, through `fault`.
    ///
    /// The service shares answers only when answers, the fetch lock and invalidations come from one
    /// store: they go through one wrapper when they do (`fromOneStore`, or one object), through one
    /// each otherwise, so that the service judges the wrappers as it would the store.
    static func caches(
        _ caches: SharedCaches,
        fromOneStore: Bool,
        clock: SimulationClock,
        fault: Fault
    ) -> SharedCaches {
        let wrapper = FaultyCache(caches, clock: clock, fault: fault)
        let oneStore = fromOneStore || isOneObject(caches)
        func own(_ concern: SharedCaches) -> FaultyCache {
            oneStore ? wrapper : FaultyCache(concern, clock: clock, fault: fault)
        }
        return SharedCaches(
            answers: caches.answers.map { own(SharedCaches(answers: $0)) },
            fetchLock: caches.fetchLock.map { own(SharedCaches(fetchLock: $0)) },
            rateLimits: caches.rateLimits.map { _ in wrapper },
            fleetBudget: caches.fleetBudget.map { _ in wrapper },
            invalidations: caches.invalidations.map { own(SharedCaches(invalidations: $0)) }
        )
    }

    /// Whether answers, invalidations and the fetch lock (when given) are one class instance.
    private static func isOneObject(_ caches: SharedCaches) -> Bool {
        guard let answers = caches.answers, let invalidations = caches.invalidations, type(of: answers) is AnyClass
        else { return false }
        let store = ObjectIdentifier(answers as AnyObject)
        guard ObjectIdentifier(invalidations as AnyObject) == store else { return false }
        return caches.fetchLock.map { ObjectIdentifier($0 as AnyObject) == store } ?? true
    }

    private enum Fate {
        case pass, failBefore, failAfter
    }

    private func failure(_ what: String) -> AppStoreGroupsError {
        AppStoreGroupsError(code: .sharedCacheFailure, message: "simulated store: \(what)")
    }

    private func delay(_ duration: Duration) async throws(AppStoreGroupsError) {
        do {
            try await clock.sleep(for: duration)
        } catch {
            throw AppStoreGroupsError(code: .cancelled, message: "cancelled during a simulated store call")
        }
    }

    /// Runs one call on the store through this service's fault.
    private func pass<Concern, Value>(
        _ concern: KeyPath<SharedCaches, Concern?>,
        _ body: (Concern) async throws(AppStoreGroupsError) -> Value
    ) async throws(AppStoreGroupsError) -> Value {
        guard let inner = inner[keyPath: concern] else { throw failure("a concern the store does not provide") }
        let (mode, fate) = fault.state.withLock { state -> (Mode, Fate) in
            guard state.mode == .flapping else { return (state.mode, .pass) }
            let draw = Int.random(in: 0..<3, using: &state.random)
            return (state.mode, draw == 0 ? .failBefore : draw == 1 ? .failAfter : .pass)
        }
        switch mode {
        case .cutOff(let timesOut):
            if timesOut { try await delay(.milliseconds(250)) }
            throw failure("cut off")
        case .slow:
            try await delay(.milliseconds(200))
        case .healthy, .flapping:
            if fate == .failBefore { throw failure("connection lost before the call") }
        }
        let value = try await clock.realCall { () async throws(AppStoreGroupsError) -> Value in try await body(inner) }
        if fate == .failAfter { throw failure("connection lost before the reply") }
        return value
    }

    func answer(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> CachedGroupsAnswer? {
        try await pass(\.answers) { cache throws(AppStoreGroupsError) in
            try await cache.answer(anyTransactionID: customerID, in: environment)
        }
    }

    func invalidationGeneration(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> InvalidationGeneration {
        try await pass(\.answers) { cache throws(AppStoreGroupsError) in
            try await cache.invalidationGeneration(anyTransactionID: customerID, in: environment)
        }
    }

    func setAnswer(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> Bool {
        try await pass(\.answers) { cache throws(AppStoreGroupsError) in try await cache.setAnswer(write) }
    }

    func releaseFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String
    ) async throws(AppStoreGroupsError) {
        try await pass(\.fetchLock) { cache throws(AppStoreGroupsError) in
            try await cache.releaseFetchLock(anyTransactionID: customerID, in: environment, owner: owner)
        }
    }

    func acquireFetchLockAndRead(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> FetchLockAttempt {
        try await pass(\.fetchLock) { cache throws(AppStoreGroupsError) in
            try await cache.acquireFetchLockAndRead(
                anyTransactionID: customerID,
                in: environment,
                owner: owner,
                timeToLive: timeToLive
            )
        }
    }

    func setAnswer(_ write: AnswerWrite, releasingFetchLock owner: String) async throws(AppStoreGroupsError) -> Bool {
        try await pass(\.fetchLock) { cache throws(AppStoreGroupsError) in
            try await cache.setAnswer(write, releasingFetchLock: owner)
        }
    }

    func rateLimitedUntil(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> Date? {
        try await pass(\.rateLimits) { cache throws(AppStoreGroupsError) in
            try await cache.rateLimitedUntil(endpoint, in: environment)
        }
    }

    func setRateLimitedUntil(
        _ instant: Date,
        for endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) {
        try await pass(\.rateLimits) { cache throws(AppStoreGroupsError) in
            try await cache.setRateLimitedUntil(instant, for: endpoint, in: environment)
        }
    }

    func takeBudgetToken(
        from budget: FleetBudget,
        maximumWait: Duration
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        try await pass(\.fleetBudget) { cache throws(AppStoreGroupsError) in
            try await cache.takeBudgetToken(from: budget, maximumWait: maximumWait)
        }
    }

    func takeBudgetToken(
        from budget: FleetBudget,
        keeping reserve: Double
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        try await pass(\.fleetBudget) { cache throws(AppStoreGroupsError) in
            try await cache.takeBudgetToken(from: budget, keeping: reserve)
        }
    }

    func invalidate(anyTransactionID customerID: String) async throws(AppStoreGroupsError) {
        try await pass(\.invalidations) { cache throws(AppStoreGroupsError) in
            try await cache.invalidate(anyTransactionID: customerID)
        }
    }

    func invalidate(groupID: String) async throws(AppStoreGroupsError) {
        try await pass(\.invalidations) { cache throws(AppStoreGroupsError) in
            try await cache.invalidate(groupID: groupID)
        }
    }

    func invalidateAll() async throws(AppStoreGroupsError) {
        try await pass(\.invalidations) { cache throws(AppStoreGroupsError) in try await cache.invalidateAll() }
    }

    func invalidationCount() async throws(AppStoreGroupsError) -> UInt64? {
        try await pass(\.invalidations) { cache throws(AppStoreGroupsError) in try await cache.invalidationCount()
        }
    }

    func answerAndInvalidationCount(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> (answer: CachedGroupsAnswer?, invalidationCount: UInt64?) {
        try await pass(\.invalidations) { cache throws(AppStoreGroupsError) in
            try await cache.answerAndInvalidationCount(anyTransactionID: customerID, in: environment)
        }
    }
}
