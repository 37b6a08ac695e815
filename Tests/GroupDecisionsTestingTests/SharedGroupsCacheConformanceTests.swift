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
        var fault: BrokenCache.Fault
        var testDescription: String { "\(fault): \(check.rawValue): \(requirement)" }
    }

    static let breakages: [Breakage] = [
        Breakage(
            check: .answers,
            requirement: "an answer is kept per environment",
            alsoFails: [.invalidations],
            fault: .sharesEnvironments
        ),
        Breakage(
            check: .conditionalWrites,
            requirement: "a write read before the customer's invalidation is refused",
            fault: .ignoresGenerations
        ),
        Breakage(
            check: .fetchLock,
            requirement: "only the owner releases a lock",
            // The combined write releases the new holder's lock too.
            alsoFails: [.conditionalWrites],
            fault: .releasesAnyOwner
        ),
        Breakage(
            check: .rateLimits,
            requirement: "an earlier instant never replaces a later one",
            fault: .keepsLastInstant
        ),
        Breakage(
            check: .fleetBudget,
            requirement: "a fourth token at once, beyond the burst, is refused (got taken(wait: 0.0 seconds))",
            fault: .endlessBudget
        ),
        Breakage(
            check: .fleetBudget,
            requirement: "a fourth token at once, beyond the burst, is refused (got taken(wait: 0.0 seconds))",
            fault: .budgetPerInstance
        ),
        Breakage(
            check: .fleetBudget,
            requirement: "each endpoint has a budget of its own: its first token is taken at once",
            fault: .oneBudgetForAll
        ),
        Breakage(
            check: .invalidationCount,
            requirement: "a customer's invalidation raises the invalidation count above 0",
            fault: .frozenCount
        ),
        Breakage(
            check: .invalidations,
            requirement: "invalidating customer c1 removes the answer of c1 Production",
            fault: .customerKeepsProduction
        ),
        Breakage(
            check: .invalidations,
            requirement: "invalidating group g2 removes the answer of c2 Sandbox",
            fault: .groupKeepsAnswers
        ),
        Breakage(
            check: .invalidations,
            requirement: "invalidating everyone removes the answer of c3 Sandbox",
            fault: .everyoneKeepsAnswers
        ),
    ]

    @Test("each check fails on a cache broken its way, naming the requirement", arguments: breakages)
    func checkFails(_ breakage: Breakage) async throws {
        let fault = breakage.fault
        let conformance = SharedGroupsCacheConformance(
            makeSecondInstance: { ($0 as! BrokenCache).secondInstance() },
            makeCache: { BrokenCache(fault) }
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
