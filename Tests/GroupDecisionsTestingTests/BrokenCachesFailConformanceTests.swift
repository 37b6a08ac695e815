import Foundation
import GroupDecisions
import GroupDecisionsTesting
import GroupPolicyTestSupport
import ServingTestSupport
import Testing

/// Every broken cache fails the conformance suite with a named check, on its own clock and on the suite's, and the
/// operation sequences alone catch each of them too: a suite that cannot fail proves nothing.
@Suite("Shared-cache conformance suite: every broken cache fails a named check", .cpuBound)
struct BrokenCachesFailConformanceTests {
    typealias Check = SharedGroupsCacheConformance.Check

    struct Breakage: Sendable, CustomTestStringConvertible {
        var fault: BrokenFault
        /// The check `run()` fails first, and its requirement (on either clock unless `onSuiteClock` says otherwise).
        var check: Check
        var requirement = ""
        /// The requirement the operation sequences fail first on the suite's clock.
        var sequences: String
        var onSuiteClock: String?
        /// Further checks that fail on their own, when `run()` stops at an earlier one.
        var alsoFails: [(Check, String)] = []
        var testDescription: String { "\(fault): \(check.rawValue): \(requirement)" }

        init(_ fault: BrokenFault, _ check: Check, sequences: String) {
            (self.fault, self.check, self.sequences) = (fault, check, sequences)
        }

        /// The breakage whose check `run()` fails with `requirement` (`onSuiteClock` on the suite's
        /// clock), and whose checks `also` fail on their own.
        func failing(_ requirement: String, onSuiteClock: String? = nil, also: [(Check, String)] = []) -> Self {
            var breakage = self
            (breakage.requirement, breakage.onSuiteClock, breakage.alsoFails) = (requirement, onSuiteClock, also)
            return breakage
        }
    }

    static let answers =
        "an answer read is the one last kept for that customer and environment, byte for byte: none once it "
        + "expired or an invalidation removed it, never another customer's or environment's"
    static let writes =
        "a write is kept exactly when no invalidation of its customer, of everyone or of one of its groups came "
        + "after its generation was read"
    static let lockHeld = "a lock has one holder until its owner releases it or it expires"
    static let lockFree =
        "a lock nobody holds (released, expired or never taken) is taken, and acquireFetchLockAndRead reports it "
        + "taken to the owner that holds it"
    static let rateLimits =
        "the latest Retry-After instant is kept, never read back earlier than set, until it passes; then none"
    static let overBudget =
        "a token is taken only when the budget holds one: at most its burst banked, refilled at its rate, "
        + "one bucket for every instance"
    static let banked = "a banked token is taken"
    static let waits =
        "a token reserved ahead comes with the wait until it is due, and only within the caller's maximum wait; "
        + "a token not taken comes with the wait until one could be"
    static let refresh =
        "a refresh takes a token only when the reserve stays banked after it, takes it then, and never reserves one ahead"
    static let countNew = "every invalidation changes the count to a value never read before"
    static let countSame = "without an invalidation, every reading from either instance gives the same count"
    static let countKept = "a store keeps a count or none: every reading answers a count, or every reading nil"

    static let reservedAhead =
        "a token reserved ahead is taken with the wait until it is due (1,000 s at 0.001 a second)"
    static let reserveNeeded =
        "a refresh takes no token the reserve needs, and says when one could be (2 banked, reserve 2)"
    static let sameCount =
        "both reads on both instances give the same count (a store keeps one or none, for every process)"
    static let groupRemoves = "invalidating a group removes the answers holding it"
    static let fourthToken = "a fourth token at once, beyond the burst, is refused"
    static func countMoves(_ invalidation: String) -> String {
        "\(invalidation) changes the count to a value never read before (counts are compared for equality only)"
    }

    static let breakages: [Breakage] = [
        Breakage(.answerOfLastWrite, .answers, sequences: answers)
            .failing(
                "an answer is kept per environment",
                also: [(.invalidations, "invalidating customer c1 removes the answer of c1 Sandbox")]
            ),
        Breakage(.sharesEnvironments, .answers, sequences: answers).failing("an answer is kept per environment"),
        Breakage(.caseInsensitiveKeys, .identifiers, sequences: lockFree)
            .failing(
                "customers whose ids differ only in case are distinct: \"admin1\" and \"ADMIN1\" do not share "
                    + "an answer"
            ),
        Breakage(.frozenCount, .invalidationCount, sequences: countNew)
            .failing(countMoves("a customer's invalidation")),
        Breakage(.lockFreeWriteIgnoresGeneration, .conditionalWrites, sequences: writes)
            .failing(
                "setAnswer(_:) at a generation read before the customer's invalidation (a refresh ahead) is refused"
            ),
        // A refill a thousand times too fast is asked of the suite's clock only: against real time it
        // shows only while the calls come many to the second (a loaded CI machine brought them to a
        // few a second, and the check rightly allowed what that much time refills).
        Breakage(.budgetPerMillisecond, .fleetBudget, sequences: overBudget)
            .failing(
                reservedAhead,
                also: [
                    (
                        .budgetRefill,
                        "the budget refills at its rate, no faster: 10 ms after it was emptied, 5 a second have "
                            + "refilled 0.05 token"
                    )
                ]
            ),
        Breakage(.refreshAlwaysGranted, .refreshTokens, sequences: overBudget).failing(reserveNeeded),
        Breakage(.normalizationFoldingKeys, .identifiers, sequences: answers)
            .failing(
                "customers whose ids differ only in Unicode normalisation (\u{E9} as one scalar, and e with a "
                    + "combining accent) are distinct: \"caf\\u{E9}\" and \"cafe\\u{301}\" do not share an answer"
            ),
        Breakage(.ignoresGenerations, .conditionalWrites, sequences: writes)
            .failing("a write read before the customer's invalidation is refused"),
        Breakage(.writeIgnoresGroups, .conditionalWrites, sequences: writes)
            .failing("an answer holding a group invalidated after its generation is refused"),
        Breakage(.releasesAnyOwner, .conditionalWrites, sequences: lockHeld)
            .failing(
                "that write leaves the new holder's lock alone",
                also: [(.fetchLock, "only the owner releases a lock")]
            ),
        Breakage(.lockNeverExpires, .fetchLock, sequences: lockFree)
            .failing(
                "a lock whose holder never releases it is free within ten seconds of a 200 ms time to live",
                onSuiteClock:
                    "a lock whose holder never releases it is free once its time to live has passed on the "
                    + "cache's clock"
            ),
        Breakage(.refusedWriteKeepsLock, .conditionalWrites, sequences: lockFree)
            .failing("a refused write still released the lock"),
        Breakage(.answersNeverExpire, .answers, sequences: answers)
            .failing(
                "an answer is gone within ten seconds of a 200 ms time to live",
                onSuiteClock: "an answer is gone once its time to live has passed on the cache's clock"
            ),
        Breakage(.keepsLastInstant, .rateLimits, sequences: rateLimits)
            .failing("an earlier instant never replaces a later one"),
        Breakage(.truncatesRetryAfter, .rateLimits, sequences: rateLimits)
            .failing("an instant reads back as set, never earlier, from either instance"),
        Breakage(.endlessBudget, .fleetBudget, sequences: overBudget).failing(fourthToken),
        Breakage(.reservesWithoutWait, .fleetBudget, sequences: waits).failing(reservedAhead),
        Breakage(.refreshIgnoresReserve, .refreshTokens, sequences: waits).failing(reserveNeeded),
        Breakage(.budgetPerInstance, .fleetBudget, sequences: overBudget).failing(fourthToken),
        Breakage(.budgetStartsFull, .fleetBudget, sequences: overBudget)
            .failing(
                "a new bucket starts with the budget's initial tokens (1 of a burst of 3), not full: no second token"
            ),
        Breakage(.oneBudgetForAll, .fleetBudget, sequences: overBudget)
            .failing(
                "a new bucket starts with the budget's initial tokens (1 of a burst of 3): its first token is taken"
            ),
        Breakage(.customerKeepsProduction, .invalidations, sequences: answers)
            .failing("invalidating customer c1 removes the answer of c1 Production"),
        Breakage(.groupKeepsAnswers, .invalidations, sequences: answers)
            .failing("invalidating group g2 removes the answer of c2 Sandbox", also: [(.identifiers, groupRemoves)]),
        Breakage(.groupIndexMissesProduction, .invalidations, sequences: answers)
            .failing("invalidating group g2 removes the answer of c2 Production", also: [(.identifiers, groupRemoves)]),
        Breakage(.everyoneKeepsAnswers, .invalidations, sequences: answers)
            .failing("invalidating everyone removes the answer of c3 Sandbox"),
        Breakage(.countPerInstance, .invalidationCount, sequences: countNew).failing(sameCount),
        Breakage(.countRestartsFromZero, .invalidationCount, sequences: countNew)
            .failing(countMoves("invalidating everyone")),
        Breakage(.combinedReadDropsCount, .invalidationCount, sequences: countKept).failing(sameCount),
    ]

    @Test("every fault of the list is a breakage below")
    func everyFaultIsListed() {
        #expect(Set(Self.breakages.map(\.fault)) == Set(BrokenFault.allCases))
        #expect(Self.breakages.count == BrokenFault.allCases.count)
    }

    @Test(
        "run() fails the broken store with the named check on either clock, its broken concern alone and its sequences",
        arguments: breakages
    )
    func runFails(_ breakage: Breakage) async throws {
        let onSuiteClock = BrokenStore.conformance(breakage.fault, onSuiteClock: true)
        let alone = BrokenStore.conformance(breakage.fault, onSuiteClock: true) { $0.caches([breakage.fault.concern]) }
        let suiteRequirement = breakage.onSuiteClock ?? breakage.requirement
        for (conformance, requirement) in [
            (BrokenStore.conformance(breakage.fault, onSuiteClock: false), breakage.requirement),
            (onSuiteClock, suiteRequirement), (alone, suiteRequirement),
        ] {
            let failure = await #expect(throws: ConformanceFailure.self) { try await conformance.run() }
            #expect(failure?.check == breakage.check)
            #expect(failure?.requirement == requirement)
            #expect(failure?.seed == nil)
            let alone = await #expect(throws: ConformanceFailure.self) { try await conformance.run(breakage.check) }
            #expect(alone?.requirement == requirement)
        }
        for (check, requirement) in breakage.alsoFails {
            let failure = await #expect(throws: ConformanceFailure.self) {
                try await onSuiteClock.run(check)
            }
            #expect(failure?.check == check)
            #expect(failure?.requirement == requirement)
        }
        // The operation sequences alone fail it too.
        let sequences = await #expect(throws: ConformanceFailure.self) {
            try await onSuiteClock.run(.operationSequences)
        }
        #expect(sequences?.check == .operationSequences)
        #expect(sequences?.requirement == breakage.sequences)
        let seed = try #require(sequences?.seed)
        #expect(SharedGroupsCacheConformance.defaultSeeds.contains(seed))
        #expect(sequences?.operations.isEmpty == false)
    }

    /// Heavy: 29 whole runs, sequences included, would starve the real-time refill check beside them.
    @Test(
        "every concern but the broken one passes every check: a store is checked for what it provides only",
        .heavy,
        arguments: breakages
    )
    func brokenConcernLeftOut(_ breakage: Breakage) async throws {
        let concerns = Set(BrokenFault.Concern.allCases).subtracting([breakage.fault.concern])
        try await BrokenStore.conformance(breakage.fault, onSuiteClock: true) { $0.caches(concerns) }.run()
    }

    @Test(
        "the operation sequences alone fail the broken cache on its own clock, but for expiry (an hour there)",
        arguments: breakages.filter { ![.answersNeverExpire, .lockNeverExpires].contains($0.fault) }
    )
    func sequencesFailOnTheirOwnClock(_ breakage: Breakage) async throws {
        let failure = await #expect(throws: ConformanceFailure.self) {
            try await BrokenStore.conformance(breakage.fault, onSuiteClock: false).run(.operationSequences)
        }
        #expect(failure?.check == .operationSequences)
        // Which budget requirement a budget fault meets first depends on the time each call took.
        let budget = [Self.overBudget, Self.banked, Self.waits, Self.refresh]
        let count = [Self.countNew, Self.countSame]
        let allowed =
            budget.contains(breakage.sequences)
            ? budget
            : count.contains(breakage.sequences)
                ? count : [breakage.sequences, Self.answers, Self.writes, Self.lockFree, Self.lockHeld]
        #expect(allowed.contains(failure?.requirement ?? ""))
        #expect(failure?.seed != nil)
    }

    @Test("a failing sequence replays from the seed its failure names")
    func sequenceReplays() async throws {
        let conformance = BrokenStore.conformance(.releasesAnyOwner, onSuiteClock: true)
        let failure = await #expect(throws: ConformanceFailure.self) { try await conformance.run(.operationSequences) }
        let seed = try #require(failure?.seed)
        let replay = await #expect(throws: ConformanceFailure.self) {
            try await conformance.runOperationSequence(seed: seed)
        }
        #expect(replay?.operations == failure?.operations)
        #expect(replay?.description == failure?.description)
        #expect(failure?.description.contains("(seed \(seed), step \(failure?.operations.count ?? 0): ") == true)
    }
}
