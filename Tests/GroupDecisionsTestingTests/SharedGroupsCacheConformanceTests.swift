import AppStoreGroups
import Foundation
import GroupDecisions
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

/// The conformance suite passes on the in-memory cache, and each of its checks fails on a cache
/// broken in the way the check is about: a suite that cannot fail proves nothing.
@Suite("Shared-cache conformance suite")
struct SharedGroupsCacheConformanceTests {
    @Test("the in-memory cache passes every check")
    func inMemoryConforms() async throws {
        try await SharedGroupsCacheConformance { InMemoryGroupsCache() }.run()
    }

    @Test("a cache whose combined calls are the protocol's defaults passes every check")
    func defaultsConform() async throws {
        try await SharedGroupsCacheConformance(readsWhenFetchLockTaken: false) {
            ScriptedGroupsCache(countsInvalidations: true)
        }
        .run()
    }

    struct Breakage: Sendable, CustomTestStringConvertible {
        var check: SharedGroupsCacheConformance.Check
        var requirement: String
        var make: @Sendable () -> any SharedGroupsCache
        var testDescription: String { "\(check.rawValue): \(requirement)" }
    }

    static let breakages: [Breakage] = [
        Breakage(check: .answers, requirement: "an answer is kept per environment") {
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
            check: .invalidationCount,
            requirement: "a customer's invalidation raises the invalidation count above 7"
        ) {
            BrokenCache(.frozenCount)
        },
    ]

    @Test("each check fails on a cache broken its way, naming the requirement", arguments: breakages)
    func checkFails(_ breakage: Breakage) async throws {
        // The broken caches make the combined calls from their single ones, as the defaults do.
        let conformance = SharedGroupsCacheConformance(readsWhenFetchLockTaken: false, makeCache: breakage.make)
        let failure = await #expect(throws: ConformanceFailure.self) { try await conformance.run(breakage.check) }
        #expect(failure?.check == breakage.check)
        #expect(failure?.requirement == breakage.requirement)
        // The other checks still pass on it: each check is about its own requirement.
        for other in SharedGroupsCacheConformance.Check.allCases where other != breakage.check {
            try await conformance.run(other)
        }
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
    }

    let fault: Fault
    let inner = InMemoryGroupsCache()

    init(_ fault: Fault) { self.fault = fault }

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
        try await inner.setAnswer(answer, anyTransactionID: customerID, in: environment, timeToLive: timeToLive)
    }

    func invalidationGeneration(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> InvalidationGeneration {
        try await inner.invalidationGeneration(anyTransactionID: customerID, in: environment)
    }

    func setAnswer(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> Bool {
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
        return try await inner.takeBudgetToken(from: budget, keeping: reserve)
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
        return try await inner.takeBudgetToken(from: budget, maximumWait: maximumWait)
    }

    func invalidate(anyTransactionID customerID: String) async throws(AppStoreGroupsError) {
        try await inner.invalidate(anyTransactionID: customerID)
    }

    func invalidate(groupID: String) async throws(AppStoreGroupsError) { try await inner.invalidate(groupID: groupID) }

    func invalidateAll() async throws(AppStoreGroupsError) { try await inner.invalidateAll() }

    func invalidationCount() async throws(AppStoreGroupsError) -> UInt64? {
        fault == .frozenCount ? 7 : try await inner.invalidationCount()
    }
}
