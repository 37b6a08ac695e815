import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy

/// The checks of writes and the fetch lock: the conditional write through both calls, and one
/// holder per customer.
extension SharedGroupsCacheConformance {
    /// The lock-free write of `answer` for the customer at `generation`, holding `groups`.
    static func lockFreeWrite(
        _ cache: any SharedAnswerCache,
        _ answer: CachedGroupsAnswer,
        for customerID: String,
        in environment: StoreEnvironment = .sandbox,
        groups: [String],
        at generation: InvalidationGeneration
    ) async throws -> Bool {
        try await cache.setAnswer(
            AnswerWrite(
                answer,
                anyTransactionID: customerID,
                in: environment,
                timeToLive: .seconds(3600),
                groupIDs: groups,
                ifGeneration: generation
            )
        )
    }

    func checkConditionalWrites(_ subject: ConformanceSubject) async throws {
        guard let answers = subject.answers, let invalidations = subject.invalidations else { return }
        if let locks = subject.fetchLock { try await checkCombinedWrites(subject, answers, locks, invalidations) }
        try await checkLockFreeWrites(subject, answers, locks: subject.fetchLock, invalidations)
    }

    /// The combined calls: the lock with the answer and generation, and the write that releases it.
    private func checkCombinedWrites(
        _ subject: ConformanceSubject,
        _ answers: ConformanceSubject.Instances<any SharedAnswerCache>,
        _ locks: ConformanceSubject.Instances<any SharedFetchLock>,
        _ invalidations: ConformanceSubject.Instances<any SharedInvalidations>
    ) async throws {
        let check = Check.conditionalWrites
        let reads = readsWhenFetchLockTaken
        let (one, two) = (locks.first, locks.other)
        let base = ConformanceValues.wholeMilliseconds(subject.now) - 60_000
        let first = ConformanceValues.answer(holding: ["g1"], fetchedAt: base)
        let describe: (FetchLockAttempt) -> String = ConformanceValues.describe
        let taken = try await Self.acquire(one, "o1")
        try check.expectTaken(taken.acquired, true, "the first caller takes the lock")
        try check.expect(
            taken.answer,
            nil,
            "the first caller takes the lock, with no answer",
            describe: ConformanceValues.describe
        )
        let start = try await answers.first.invalidationGeneration(anyTransactionID: "c1", in: .sandbox)
        try check.expect(
            taken.generation ?? start,
            start,
            "the lock comes with the generation invalidationGeneration reads",
            describe: ConformanceValues.describe
        )
        try check.expect(
            try await Self.acquire(two, "o2"),
            FetchLockAttempt(acquired: false, answer: nil, generation: reads ? start : nil),
            "another caller does not take a held lock",
            describe: describe
        )
        try check.expectKept(
            try await Self.write(one, first, groups: ["g1"], at: start, releasing: "o1"),
            true,
            "a write at the current generation is kept"
        )
        try await Self.expectAnswer(check, subject, "c1", .sandbox, first, "the kept write reads back")
        try check.expect(
            try await Self.acquire(two, "o2"),
            FetchLockAttempt(acquired: true, answer: first, generation: start),
            "the write released the lock, and the next holder reads the answer kept meanwhile",
            describe: describe
        )
        try await invalidations.first.invalidate(anyTransactionID: "c1")
        let second = ConformanceValues.answer(holding: ["g2"], fetchedAt: base + 1)
        try check.expectKept(
            try await Self.write(two, second, groups: ["g2"], at: start, releasing: "o2"),
            false,
            "a write read before the customer's invalidation is refused"
        )
        try await Self.expectAnswer(check, subject, "c1", .sandbox, nil, "the invalidation removed the answer")
        let moved = try await Self.acquire(one, "o3")
        try check.expectTaken(
            moved.acquired,
            true,
            "a refused write still released the lock"
        )
        let afterCustomer = try await answers.first.invalidationGeneration(anyTransactionID: "c1", in: .sandbox)
        try check.require(
            afterCustomer != start,
            "a customer's invalidation moves the customer's generation",
            expected: "a generation other than \(ConformanceValues.describe(start))",
            actual: ConformanceValues.describe(afterCustomer)
        )
        try await invalidations.other.invalidateAll()
        try await one.releaseFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "o3")
        let afterAll = try await Self.acquire(two, "o4")
        try check.require(
            afterAll.acquired && afterAll.generation.map { $0 != afterCustomer } ?? true,
            "invalidating everyone moves every customer's generation",
            expected: "taken, with a generation other than \(ConformanceValues.describe(afterCustomer))",
            actual: describe(afterAll)
        )
        let current = try await answers.other.invalidationGeneration(anyTransactionID: "c1", in: .sandbox)
        try await invalidations.first.invalidate(groupID: "g1")
        try await two.releaseFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "o4")
        _ = try await Self.acquire(one, "o5")
        try check.expectKept(
            try await Self.write(one, first, groups: ["g1"], at: current, releasing: "o5"),
            false,
            "an answer holding a group invalidated after its generation is refused"
        )
        let late = ConformanceValues.answer(holding: ["g3"], fetchedAt: base + 2)
        _ = try await Self.acquire(two, "o6")
        try check.expectKept(
            try await Self.write(
                one,
                late,
                groups: ["g3"],
                at: try await answers.first.invalidationGeneration(anyTransactionID: "c1", in: .sandbox),
                releasing: "o5"
            ),
            true,
            "a writer whose lock passed to another keeps its answer when nothing was invalidated since"
        )
        let held = try await Self.acquire(one, "o7")
        try check.expect(
            FetchLockAttempt(acquired: held.acquired, answer: reads ? held.answer : nil, generation: nil),
            FetchLockAttempt(acquired: false, answer: reads ? late : nil, generation: nil),
            "that write leaves the new holder's lock alone",
            describe: describe
        )
    }

    /// The lock-free write, as a refresh ahead makes it: at the current generation, and at stale ones.
    private func checkLockFreeWrites(
        _ subject: ConformanceSubject,
        _ answers: ConformanceSubject.Instances<any SharedAnswerCache>,
        locks: ConformanceSubject.Instances<any SharedFetchLock>?,
        _ invalidations: ConformanceSubject.Instances<any SharedInvalidations>
    ) async throws {
        let check = Check.conditionalWrites
        let (one, two) = (answers.first, invalidations.other)
        let base = ConformanceValues.wholeMilliseconds(subject.now) - 30_000
        func answer(_ offset: Int64, _ groups: [String]) -> CachedGroupsAnswer {
            ConformanceValues.answer(holding: groups, fetchedAt: base + offset)
        }
        func generation(
            _ customerID: String,
            _ environment: StoreEnvironment = .sandbox
        ) async throws
            -> InvalidationGeneration
        {
            try await one.invalidationGeneration(anyTransactionID: customerID, in: environment)
        }
        // The refresh ahead of the adversarial pass: it read the generation, the customer was
        // invalidated (through another process), and it writes the revoked answer back.
        let fetched = try await generation("r1")
        try check.expectKept(
            try await Self.lockFreeWrite(one, answer(0, ["g1"]), for: "r1", groups: ["g1"], at: fetched),
            true,
            "setAnswer(_:) at the current generation is kept"
        )
        try await two.invalidate(anyTransactionID: "r1")
        try check.expectKept(
            try await Self.lockFreeWrite(one, answer(1, ["g1"]), for: "r1", groups: ["g1"], at: fetched),
            false,
            "setAnswer(_:) at a generation read before the customer's invalidation (a refresh ahead) is refused"
        )
        try await Self.expectAnswer(check, subject, "r1", .sandbox, nil, "a refused write keeps nothing")
        let production = try await generation("r1", .production)
        try await two.invalidate(anyTransactionID: "r1")
        try check.expectKept(
            try await Self.lockFreeWrite(
                one,
                answer(2, ["g1"]),
                for: "r1",
                in: .production,
                groups: ["g1"],
                at: production
            ),
            false,
            "a customer's invalidation refuses the writes read before it in every environment"
        )
        let beforeAll = try await generation("r2")
        try await two.invalidateAll()
        try check.expectKept(
            try await Self.lockFreeWrite(one, answer(3, ["g2"]), for: "r2", groups: ["g2"], at: beforeAll),
            false,
            "setAnswer(_:) at a generation read before everyone's invalidation is refused"
        )
        let beforeGroup = try await generation("r3")
        try await two.invalidate(groupID: "g9")
        try check.expectKept(
            try await Self.lockFreeWrite(
                one,
                answer(4, ["g8", "g9"]),
                for: "r3",
                groups: ["g8", "g9"],
                at: beforeGroup
            ),
            false,
            "setAnswer(_:) of an answer holding a group invalidated after its generation is refused"
        )
        try check.expectKept(
            try await Self.lockFreeWrite(one, answer(5, ["g8"]), for: "r3", groups: ["g8"], at: beforeGroup),
            true,
            "setAnswer(_:) of an answer holding no group invalidated since its generation is kept"
        )
        let beforeOther = try await generation("r4")
        try await two.invalidate(anyTransactionID: "r5")
        try check.expectKept(
            try await Self.lockFreeWrite(one, answer(6, ["g1"]), for: "r4", groups: ["g1"], at: beforeOther),
            true,
            "another customer's invalidation refuses no write"
        )
        // A stale generation once more through the combined call, after a kept answer.
        guard let lock = locks?.first else { return }
        let stale = try await generation("r4")
        try await two.invalidate(anyTransactionID: "r4")
        let attempt = try await lock.acquireFetchLockAndRead(
            anyTransactionID: "r4",
            in: .sandbox,
            owner: "w1",
            timeToLive: Self.lockLifetime
        )
        try check.expectTaken(attempt.acquired, true, "a free lock is taken")
        try check.expectKept(
            try await lock.setAnswer(
                AnswerWrite(
                    answer(7, ["g1"]),
                    anyTransactionID: "r4",
                    in: .sandbox,
                    timeToLive: .seconds(3600),
                    groupIDs: ["g1"],
                    ifGeneration: stale
                ),
                releasingFetchLock: "w1"
            ),
            false,
            "setAnswer(_:releasingFetchLock:) at a generation read before the customer's invalidation is refused"
        )
        try await Self.expectAnswer(check, subject, "r4", .sandbox, nil, "a refused write keeps nothing")
    }

    func checkFetchLock(_ subject: ConformanceSubject) async throws {
        let check = Check.fetchLock
        guard let locks = subject.fetchLock else { return }
        let lifetime = Self.lockLifetime
        let (one, two) = (locks.first, locks.other)
        func acquire(
            _ cache: any SharedFetchLock,
            _ customerID: String,
            _ environment: StoreEnvironment,
            _ owner: String
        )
            async throws -> Bool
        {
            try await cache.acquireFetchLockAndRead(
                anyTransactionID: customerID,
                in: environment,
                owner: owner,
                timeToLive: lifetime
            ).acquired
        }
        try check.expectTaken(try await acquire(one, "c1", .sandbox, "o1"), true, "a free lock is taken")
        try check.expectTaken(
            try await acquire(two, "c1", .sandbox, "o2"),
            false,
            "a held lock is not taken by another owner, through either instance"
        )
        try check.expectTaken(try await acquire(two, "c1", .production, "o2"), true, "locks are kept per environment")
        try check.expectTaken(try await acquire(two, "c2", .sandbox, "o2"), true, "locks are kept per customer")
        try await two.releaseFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "o2")
        try check.expectTaken(try await acquire(one, "c1", .sandbox, "o3"), false, "only the owner releases a lock")
        let again = try await two.acquireFetchLockAndRead(
            anyTransactionID: "c1",
            in: .sandbox,
            owner: "o1",
            timeToLive: lifetime
        )
        // A call sent again answers as the first did; the steps answer as the single call does.
        if readsWhenFetchLockTaken {
            try check.expectTaken(
                again.acquired,
                true,
                "acquireFetchLockAndRead reports the lock taken when its owner already holds it"
            )
        }
        try check.expectTaken(
            try await two.acquireFetchLockAndRead(
                anyTransactionID: "c1",
                in: .sandbox,
                owner: "o3",
                timeToLive: lifetime
            ).acquired,
            false,
            "a held lock is not taken by another owner through acquireFetchLockAndRead"
        )
        try await two.releaseFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "o1")
        try check.expectTaken(
            try await acquire(one, "c1", .sandbox, "o3"),
            true,
            "a lock its owner released is taken again"
        )
        // Expiry: a holder that dies blocks the others for the lock's time to live only.
        let short: Duration = subject.clock == nil ? .milliseconds(200) : .seconds(2)
        try check.expectTaken(
            try await one.acquireFetchLockAndRead(
                anyTransactionID: "c3",
                in: .sandbox,
                owner: "dead",
                timeToLive: short
            )
            .acquired,
            true,
            "a free lock is taken"
        )
        if subject.clock != nil {
            try await subject.pass(.milliseconds(1_500))
            try check.expectTaken(
                try await acquire(two, "c3", .sandbox, "o4"),
                false,
                "a lock is held for its time to live"
            )
        }
        let expired = try await subject.eventually(after: subject.clock == nil ? .milliseconds(200) : .seconds(1)) {
            try await acquire(two, "c3", .sandbox, "o4")
        }
        try check.require(
            expired,
            subject.clock == nil
                ? "a lock whose holder never releases it is free within ten seconds of a 200 ms time to live"
                : "a lock whose holder never releases it is free once its time to live has passed on the cache's clock",
            expected: "taken",
            actual: "not taken"
        )
    }
}
