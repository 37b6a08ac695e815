import AppStoreGroups
import Foundation
import GroupDecisions
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Synchronization
import Testing

/// The conformance suite passes on the in-memory cache, and each of its checks fails on a cache
/// broken in the way the check is about: a suite that cannot fail proves nothing.
@Suite("Shared-cache conformance suite")
struct SharedGroupsCacheConformanceTests {
    @Test("the in-memory cache passes every check")
    func inMemoryConforms() async throws {
        // One process: the instance is the storage, so a second process's instance is itself.
        try await SharedGroupsCacheConformance(makeSecondInstance: { $0 }) { InMemoryGroupsCache() }.run()
    }

    @Test("a cache whose combined calls are the protocol's defaults passes every check")
    func defaultsConform() async throws {
        try await SharedGroupsCacheConformance(readsWhenFetchLockTaken: false, makeSecondInstance: { $0 }) {
            ScriptedGroupsCache(countsInvalidations: true)
        }
        .run()
    }

    struct Breakage: Sendable, CustomTestStringConvertible {
        var check: SharedGroupsCacheConformance.Check
        var requirement: String
        /// Other checks the breakage rightly fails too (reading one environment's answers for the
        /// other's also breaks what an invalidation leaves in each).
        var alsoFails: Set<SharedGroupsCacheConformance.Check> = []
        var make: @Sendable () -> any SharedGroupsCache
        var testDescription: String { "\(check.rawValue): \(requirement)" }
    }

    static let breakages: [Breakage] = [
        Breakage(check: .answers, requirement: "an answer is kept per environment", alsoFails: [.invalidations]) {
            BrokenCache(.sharesEnvironments)
        },
        Breakage(check: .conditionalWrites, requirement: "a write read before the customer's invalidation is refused") {
            BrokenCache(.ignoresGenerations)
        },
        Breakage(check: .fetchLock, requirement: "only the owner releases a lock") { BrokenCache(.releasesAnyOwner) },
        Breakage(check: .rateLimits, requirement: "an earlier instant never replaces a later one") {
            BrokenCache(.keepsLastInstant)
        },
        Breakage(
            check: .fleetBudget,
            requirement: "a fourth token at once, beyond the burst, is refused (got taken(wait: 0.0 seconds))"
        ) {
            BrokenCache(.endlessBudget)
        },
        Breakage(
            check: .fleetBudget,
            requirement: "a fourth token at once, beyond the burst, is refused (got taken(wait: 0.0 seconds))"
        ) {
            BrokenCache(.budgetPerInstance)
        },
        Breakage(
            check: .fleetBudget,
            requirement: "each endpoint has a budget of its own: its first token is taken at once"
        ) {
            BrokenCache(.oneBudgetForAll)
        },
        Breakage(
            check: .invalidationCount,
            requirement: "a customer's invalidation raises the invalidation count above 7"
        ) {
            BrokenCache(.frozenCount)
        },
        Breakage(check: .invalidations, requirement: "invalidating customer c1 removes the answer of c1 Production") {
            BrokenCache(.customerKeepsProduction)
        },
        Breakage(check: .invalidations, requirement: "invalidating group g2 removes the answer of c2 Sandbox") {
            BrokenCache(.groupKeepsAnswers)
        },
        Breakage(check: .invalidations, requirement: "invalidating everyone removes the answer of c3 Sandbox") {
            BrokenCache(.everyoneKeepsAnswers)
        },
    ]

    @Test("each check fails on a cache broken its way, naming the requirement", arguments: breakages)
    func checkFails(_ breakage: Breakage) async throws {
        // The broken caches make the combined calls from their single ones, as the defaults do.
        let conformance = SharedGroupsCacheConformance(
            readsWhenFetchLockTaken: false,
            makeSecondInstance: { ($0 as! BrokenCache).secondInstance() },
            makeCache: breakage.make
        )
        let failure = await #expect(throws: ConformanceFailure.self) { try await conformance.run(breakage.check) }
        #expect(failure?.check == breakage.check)
        #expect(failure?.requirement == breakage.requirement)
        // The other checks still pass on it: each check is about its own requirement.
        for other in SharedGroupsCacheConformance.Check.allCases
        where other != breakage.check && !breakage.alsoFails.contains(other) {
            try await conformance.run(other)
        }
    }

    @Test("a cache that keeps the fleet's budget fails the budget check without a second instance")
    func fleetBudgetNeedsASecondInstance() async throws {
        let conformance = SharedGroupsCacheConformance { InMemoryGroupsCache() }
        let failure = await #expect(throws: ConformanceFailure.self) { try await conformance.run(.fleetBudget) }
        #expect(
            failure?.description
                == "fleetBudget: a cache that keeps the fleet's budget is shown sharing it with a second instance: "
                + "expected makeSecondInstance, got nil"
        )
    }

    @Test("a failure reads as one line naming the check, the requirement and both values")
    func failureDescription() {
        let failure = ConformanceFailure(
            check: .rateLimits,
            requirement: "an earlier instant never replaces a later one",
            expected: "b",
            actual: "a"
        )
        #expect(failure.description == "rateLimits: an earlier instant never replaces a later one: expected b, got a")
    }
}

/// An in-memory cache broken in one way.
final class BrokenCache: SharedGroupsCache, Sendable {
    enum Fault: Sendable {
        case sharesEnvironments, ignoresGenerations, releasesAnyOwner, keepsLastInstant, endlessBudget, frozenCount
        /// Each instance keeps a budget of its own: a fleet of N spends N budgets.
        case budgetPerInstance
        /// One budget for every endpoint and environment.
        case oneBudgetForAll
        /// `invalidate(anyTransactionID:)` forgets the sandbox answer only.
        case customerKeepsProduction
        /// `invalidate(groupID:)` counts and moves the generation, but forgets no answer.
        case groupKeepsAnswers
        /// `invalidateAll()` counts and moves the generation, but forgets no answer.
        case everyoneKeepsAnswers
    }

    let fault: Fault
    let inner: InMemoryGroupsCache
    /// Where the budget is kept: the shared storage, or this instance's own.
    private let budgets: InMemoryGroupsCache
    /// Every customer and environment written, so that a fault can put their answers back.
    private let written: Mutex<Set<CustomerKey>>

    struct CustomerKey: Hashable, Sendable {
        var customerID: String
        var environment: StoreEnvironment
    }

    init(_ fault: Fault) {
        self.fault = fault
        inner = InMemoryGroupsCache()
        budgets = inner
        written = Mutex([])
    }

    private init(sharing other: BrokenCache) {
        fault = other.fault
        inner = other.inner
        budgets = other.fault == .budgetPerInstance ? InMemoryGroupsCache() : other.inner
        written = Mutex(other.written.withLock { $0 })
    }

    /// Another instance over the same storage, as a second process would open it.
    func secondInstance() -> BrokenCache { BrokenCache(sharing: self) }

    private func remember(_ customerID: String, _ environment: StoreEnvironment) {
        _ = written.withLock { $0.insert(CustomerKey(customerID: customerID, environment: environment)) }
    }

    /// Runs `invalidation`, then puts back the answers of `keep` it removed.
    private func keepingAnswers(
        of keep: (CustomerKey) -> Bool,
        _ invalidation: () async throws(AppStoreGroupsError) -> Void
    ) async throws(AppStoreGroupsError) {
        var saved: [(CustomerKey, CachedGroupsAnswer)] = []
        for key in written.withLock({ Array($0) }) where keep(key) {
            if let answer = try await inner.answer(anyTransactionID: key.customerID, in: key.environment) {
                saved.append((key, answer))
            }
        }
        try await invalidation()
        for (key, answer) in saved {
            try await inner.setAnswer(
                answer,
                anyTransactionID: key.customerID,
                in: key.environment,
                timeToLive: .seconds(3600)
            )
        }
    }

    /// The budget this cache takes a token from instead of `budget`.
    private func bucket(_ budget: FleetBudget) -> FleetBudget {
        guard fault == .oneBudgetForAll else { return budget }
        return FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: budget.ratePerSecond, burst: budget.burst)
    }

    func answer(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError)
        -> CachedGroupsAnswer?
    {
        try await inner.answer(anyTransactionID: customerID, in: fault == .sharesEnvironments ? .sandbox : environment)
    }

    func setAnswer(
        _ answer: CachedGroupsAnswer,
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) {
        remember(customerID, environment)
        try await inner.setAnswer(answer, anyTransactionID: customerID, in: environment, timeToLive: timeToLive)
    }

    func invalidationGeneration(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> InvalidationGeneration {
        try await inner.invalidationGeneration(anyTransactionID: customerID, in: environment)
    }

    func setAnswer(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> Bool {
        remember(write.customerID, write.environment)
        guard fault == .ignoresGenerations else { return try await inner.setAnswer(write) }
        try await inner.setAnswer(
            write.answer,
            anyTransactionID: write.customerID,
            in: write.environment,
            timeToLive: write.timeToLive
        )
        return true
    }

    func acquireFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> Bool {
        try await inner.acquireFetchLock(
            anyTransactionID: customerID,
            in: environment,
            owner: owner,
            timeToLive: timeToLive
        )
    }

    func releaseFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String
    )
        async throws(AppStoreGroupsError)
    {
        guard fault == .releasesAnyOwner else {
            return try await inner.releaseFetchLock(anyTransactionID: customerID, in: environment, owner: owner)
        }
        // Releases whoever holds it: takes the lock's owner from a fresh attempt that fails.
        for holder in ["o1", "o2", "o3", owner] {
            try await inner.releaseFetchLock(anyTransactionID: customerID, in: environment, owner: holder)
        }
    }

    func rateLimitedUntil(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError)
        -> Date?
    { try await inner.rateLimitedUntil(endpoint, in: environment) }

    func setRateLimitedUntil(
        _ instant: Date,
        for endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    )
        async throws(AppStoreGroupsError)
    {
        if fault == .keepsLastInstant { inner.removeRateLimit(endpoint, in: environment) }
        try await inner.setRateLimitedUntil(instant, for: endpoint, in: environment)
    }

    var keepsFleetBudget: Bool { true }

    func takeBudgetToken(
        from budget: FleetBudget,
        keeping reserve: Double
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        if fault == .endlessBudget { return .taken(wait: .zero) }
        return try await budgets.takeBudgetToken(from: bucket(budget), keeping: reserve)
    }

    func acquireFetchLockAndRead(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> FetchLockAttempt {
        try await acquireFetchLockAndReadInSteps(
            anyTransactionID: customerID,
            in: environment,
            owner: owner,
            timeToLive: timeToLive
        )
    }

    func setAnswer(_ write: AnswerWrite, releasingFetchLock owner: String) async throws(AppStoreGroupsError) -> Bool {
        try await setAnswerInSteps(write, releasingFetchLock: owner)
    }

    func answerAndInvalidationCount(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> (answer: CachedGroupsAnswer?, invalidationCount: UInt64?) {
        let count = try await invalidationCount()
        return (try await answer(anyTransactionID: customerID, in: environment), count)
    }

    func takeBudgetToken(
        from budget: FleetBudget,
        maximumWait: Duration
    ) async throws(AppStoreGroupsError)
        -> FleetBudgetToken
    {
        if fault == .endlessBudget { return .taken(wait: .zero) }
        return try await budgets.takeBudgetToken(from: bucket(budget), maximumWait: maximumWait)
    }

    func invalidate(anyTransactionID customerID: String) async throws(AppStoreGroupsError) {
        let fault = fault
        let keep: (CustomerKey) -> Bool = {
            fault == .customerKeepsProduction && $0.customerID == customerID && $0.environment == .production
        }
        try await keepingAnswers(of: keep) { () throws(AppStoreGroupsError) in
            try await inner.invalidate(anyTransactionID: customerID)
        }
    }

    func invalidate(groupID: String) async throws(AppStoreGroupsError) {
        let keep = fault == .groupKeepsAnswers
        let keeps: (CustomerKey) -> Bool = { _ in keep }
        try await keepingAnswers(of: keeps) { () throws(AppStoreGroupsError) in
            try await inner.invalidate(groupID: groupID)
        }
    }

    func invalidateAll() async throws(AppStoreGroupsError) {
        let keep = fault == .everyoneKeepsAnswers
        let keeps: (CustomerKey) -> Bool = { _ in keep }
        try await keepingAnswers(of: keeps) { () throws(AppStoreGroupsError) in try await inner.invalidateAll() }
    }

    func invalidationCount() async throws(AppStoreGroupsError) -> UInt64? {
        fault == .frozenCount ? 7 : try await inner.invalidationCount()
    }
}
