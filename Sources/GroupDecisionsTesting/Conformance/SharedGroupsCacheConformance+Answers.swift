import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy

/// The checks of answers: reading them back, ids byte for byte, and what an invalidation removes.
extension SharedGroupsCacheConformance {
    /// Throws unless both reads (`answer`, and `answerAndInvalidationCount` when the store provides
    /// invalidations) on every instance give `expected` for the customer.
    static func expectAnswer(
        _ check: Check,
        _ subject: ConformanceSubject,
        _ customerID: String,
        _ environment: StoreEnvironment,
        _ expected: CachedGroupsAnswer?,
        _ requirement: String
    ) async throws {
        guard let answers = subject.answers else { return }
        let invalidations = subject.invalidations
        for (index, cache) in answers.all.enumerated() {
            let instance = index == 0 ? "first instance" : "second instance"
            var reads: [(String, CachedGroupsAnswer?)] = [
                ("answer", try await cache.answer(anyTransactionID: customerID, in: environment))
            ]
            if let combined = invalidations?.instance(index) {
                let read = try await combined.answerAndInvalidationCount(anyTransactionID: customerID, in: environment)
                reads.append(("answerAndInvalidationCount", read.answer))
            }
            for (call, answer) in reads where answer != expected {
                throw ConformanceFailure(
                    check: check,
                    requirement: requirement,
                    expected: ConformanceValues.describe(expected),
                    actual: "\(ConformanceValues.describe(answer)) (\(call) of "
                        + "\(ConformanceValues.quoted(customerID)) in \(environment), \(instance))"
                )
            }
        }
    }

    /// Writes `answer` for the customer at the generation read now, through `cache`, and throws
    /// unless it is kept.
    static func keep(
        _ check: Check,
        _ cache: any SharedAnswerCache,
        _ answer: CachedGroupsAnswer,
        for customerID: String,
        in environment: StoreEnvironment,
        timeToLive: Duration = .seconds(3600)
    ) async throws {
        let write = AnswerWrite(
            answer,
            anyTransactionID: customerID,
            in: environment,
            timeToLive: timeToLive,
            groupIDs: ConformanceValues.groups(of: answer) ?? [],
            ifGeneration: try await cache.invalidationGeneration(anyTransactionID: customerID, in: environment)
        )
        try check.expectKept(
            try await cache.setAnswer(write),
            true,
            "a write at the generation read just before is kept (\(ConformanceValues.quoted(customerID)) in \(environment))"
        )
    }

    func checkAnswers(_ subject: ConformanceSubject) async throws {
        let check = Check.answers
        guard let answers = subject.answers else { return }
        let base = ConformanceValues.wholeMilliseconds(subject.now) - 60_000
        let first = ConformanceValues.answer(holding: ["g1"], fetchedAt: base)
        let later = ConformanceValues.answer(holding: ["g2"], fetchedAt: base + 1)
        let negative = ConformanceValues.notFound(fetchedAt: base + 2)
        try await Self.expectAnswer(check, subject, "c1", .sandbox, nil, "an empty cache holds no answer")
        try await Self.keep(check, answers.first, first, for: "c1", in: .sandbox, timeToLive: .seconds(3600))
        try await Self.expectAnswer(
            check,
            subject,
            "c1",
            .sandbox,
            first,
            "an answer reads back as written, from either instance and through either read"
        )
        try await Self.expectAnswer(check, subject, "c1", .production, nil, "an answer is kept per environment")
        try await Self.expectAnswer(
            check,
            subject,
            "c2",
            .sandbox,
            nil,
            "an answer is kept per customer: a customer with none reads none, whoever else has one"
        )
        try await Self.keep(check, answers.other, negative, for: "c2", in: .sandbox, timeToLive: .seconds(3600))
        try await Self.expectAnswer(check, subject, "c2", .sandbox, negative, "a negative answer reads back")
        try await Self.keep(check, answers.other, later, for: "c1", in: .sandbox, timeToLive: .seconds(3600))
        try await Self.expectAnswer(
            check,
            subject,
            "c1",
            .sandbox,
            later,
            "a later answer replaces the customer's earlier one"
        )
        let written = ConformanceValues.answer(holding: ["g4", "g5"], fetchedAt: base + 3)
        try await Self.keep(check, answers.other, written, for: "c4", in: .production)
        try await Self.expectAnswer(
            check,
            subject,
            "c4",
            .production,
            written,
            "an answer kept by setAnswer(_:) reads back as written"
        )
        try await Self.expectAnswer(check, subject, "c4", .sandbox, nil, "an answer is kept per environment")
        try await checkExpiry(subject, answers, base: base)
    }

    /// Answers written by both writes are gone once their time to live has passed.
    private func checkExpiry(
        _ subject: ConformanceSubject,
        _ answers: ConformanceSubject.Instances<any SharedAnswerCache>,
        base: Int64
    ) async throws {
        let check = Check.answers
        let plain = ConformanceValues.answer(holding: ["g3"], fetchedAt: base + 10)
        let written = ConformanceValues.answer(holding: ["g3"], fetchedAt: base + 11)
        let lifetime: Duration = subject.clock == nil ? .milliseconds(200) : .seconds(2)
        try await Self.keep(check, answers.first, plain, for: "c3", in: .sandbox, timeToLive: lifetime)
        try await Self.keep(check, answers.other, written, for: "c5", in: .sandbox, timeToLive: lifetime)
        if subject.clock != nil {
            try await subject.pass(.milliseconds(1_500))
            try await Self.expectAnswer(check, subject, "c3", .sandbox, plain, "an answer is kept for its time to live")
            try await Self.expectAnswer(
                check,
                subject,
                "c5",
                .sandbox,
                written,
                "an answer is kept for its time to live"
            )
        }
        let gone = try await subject.eventually(after: subject.clock == nil ? .milliseconds(200) : .seconds(1)) {
            for cache in answers.all {
                for customer in ["c3", "c5"] {
                    if try await cache.answer(anyTransactionID: customer, in: .sandbox) != nil { return false }
                }
            }
            return true
        }
        let requirement =
            subject.clock == nil
            ? "an answer is gone within ten seconds of a 200 ms time to live"
            : "an answer is gone once its time to live has passed on the cache's clock"
        try check.require(gone, requirement, expected: "no answer for c3 and c5", actual: "an answer")
        try await Self.expectAnswer(check, subject, "c3", .sandbox, nil, requirement)
        try await Self.expectAnswer(check, subject, "c5", .sandbox, nil, requirement)
    }

    /// Customer ids that look alike, and how they differ.
    static let lookalikeCustomers: [(String, String, String)] = [
        ("admin1", "ADMIN1", "only in case"),
        (
            "caf\u{E9}", "cafe\u{301}",
            "only in Unicode normalisation (\u{E9} as one scalar, and e with a combining accent)"
        ),
        ("\u{FB01}le7", "file7", "only in compatibility normalisation (the ligature \u{FB01}, and f i)"),
    ]

    func checkIdentifiers(_ subject: ConformanceSubject) async throws {
        let check = Check.identifiers
        let base = ConformanceValues.wholeMilliseconds(subject.now) - 60_000
        func mine(_ index: Int) -> CachedGroupsAnswer {
            ConformanceValues.answer(holding: ["g\(index)"], fetchedAt: base + Int64(index) * 10)
        }
        func theirs(_ index: Int) -> CachedGroupsAnswer {
            ConformanceValues.answer(holding: ["h\(index)"], fetchedAt: base + Int64(index) * 10 + 1)
        }
        if let answers = subject.answers {
            for (index, (one, other, how)) in Self.lookalikeCustomers.enumerated() {
                let ids = "\(ConformanceValues.quoted(one)) and \(ConformanceValues.quoted(other))"
                try await Self.keep(check, answers.first, mine(index), for: one, in: .sandbox)
                try await Self.expectAnswer(
                    check,
                    subject,
                    other,
                    .sandbox,
                    nil,
                    "customers whose ids differ \(how) are distinct: \(ids) do not share an answer"
                )
                try await Self.keep(check, answers.other, theirs(index), for: other, in: .sandbox)
                for (customer, answer) in [(one, mine(index)), (other, theirs(index))] {
                    try await Self.expectAnswer(
                        check,
                        subject,
                        customer,
                        .sandbox,
                        answer,
                        "customers whose ids differ \(how) are distinct: each of \(ids) reads its own answer"
                    )
                }
            }
        }
        if let locks = subject.fetchLock {
            for (index, (one, other, how)) in Self.lookalikeCustomers.enumerated() {
                let ids = "\(ConformanceValues.quoted(one)) and \(ConformanceValues.quoted(other))"
                try check.expectTaken(
                    try await locks.first.acquireFetchLockAndRead(
                        anyTransactionID: one,
                        in: .sandbox,
                        owner: "lock-\(index)-a",
                        timeToLive: Self.lockLifetime
                    ).acquired,
                    true,
                    "a free lock is taken (\(ConformanceValues.quoted(one)))"
                )
                try check.expectTaken(
                    try await locks.other.acquireFetchLockAndRead(
                        anyTransactionID: other,
                        in: .sandbox,
                        owner: "lock-\(index)-b",
                        timeToLive: Self.lockLifetime
                    ).acquired,
                    true,
                    "customers whose ids differ \(how) are distinct: \(ids) each have a lock of their own"
                )
            }
        }
        guard let answers = subject.answers, let invalidations = subject.invalidations else { return }
        for (index, (one, other, how)) in Self.lookalikeCustomers.enumerated() {
            let ids = "\(ConformanceValues.quoted(one)) and \(ConformanceValues.quoted(other))"
            let generation = try await answers.first.invalidationGeneration(anyTransactionID: one, in: .sandbox)
            try await invalidations.other.invalidate(anyTransactionID: other)
            try await Self.expectAnswer(
                check,
                subject,
                one,
                .sandbox,
                mine(index),
                "customers whose ids differ \(how) are distinct: invalidating one of \(ids) leaves the other's answer"
            )
            try await Self.expectAnswer(
                check,
                subject,
                other,
                .sandbox,
                nil,
                "an invalidation removes the customer's answer"
            )
            let rewrite = ConformanceValues.answer(holding: ["g\(index)"], fetchedAt: base + Int64(index) * 10 + 2)
            try check.expectKept(
                try await Self.lockFreeWrite(
                    answers.first,
                    rewrite,
                    for: one,
                    groups: ["g\(index)"],
                    at: generation
                ),
                true,
                "customers whose ids differ \(how) are distinct: invalidating one of \(ids) refuses no write of the other"
            )
        }
        try await checkLookalikeGroups(subject, answers, invalidations, base: base + 1_000)
    }

    /// Group ids that differ in case are distinct; one that differs in normalisation may be taken
    /// for the other (an answer forgotten too many costs a fetch), never missed.
    private func checkLookalikeGroups(
        _ subject: ConformanceSubject,
        _ answerCaches: ConformanceSubject.Instances<any SharedAnswerCache>,
        _ invalidations: ConformanceSubject.Instances<any SharedInvalidations>,
        base: Int64
    ) async throws {
        let check = Check.identifiers
        let groups = ["grp1", "GRP1", "gr\u{E9}", "gre\u{301}"]
        var answers: [CachedGroupsAnswer] = []
        for (index, group) in groups.enumerated() {
            let answer = ConformanceValues.answer(holding: [group], fetchedAt: base + Int64(index))
            try await Self.keep(check, answerCaches.instance(index), answer, for: "m\(index)", in: .production)
            answers.append(answer)
        }
        let before = try await answerCaches.first.invalidationGeneration(anyTransactionID: "m0", in: .production)
        try await invalidations.other.invalidate(groupID: "GRP1")
        try await Self.expectAnswer(
            check,
            subject,
            "m1",
            .production,
            nil,
            "invalidating a group removes the answers holding it"
        )
        try await Self.expectAnswer(
            check,
            subject,
            "m0",
            .production,
            answers[0],
            "group ids that differ only in case are distinct: invalidating \"GRP1\" leaves an answer holding \"grp1\""
        )
        let rewrite = ConformanceValues.answer(holding: ["grp1"], fetchedAt: base + 10)
        try check.expectKept(
            try await answerCaches.first.setAnswer(
                AnswerWrite(
                    rewrite,
                    anyTransactionID: "m0",
                    in: .production,
                    timeToLive: .seconds(3600),
                    groupIDs: ["grp1"],
                    ifGeneration: before
                )
            ),
            true,
            "group ids that differ only in case are distinct: invalidating \"GRP1\" refuses no answer holding \"grp1\""
        )
        // One answer holding both spellings is listed under each.
        let both = ConformanceValues.answer(holding: ["gr\u{E9}", "gre\u{301}"], fetchedAt: base + 11)
        try await Self.keep(check, answerCaches.other, both, for: "m4", in: .production)
        let beforeSpelling = try await answerCaches.first.invalidationGeneration(
            anyTransactionID: "m5",
            in: .production
        )
        try await invalidations.first.invalidate(groupID: "gre\u{301}")
        for customer in ["m3", "m4"] {
            try await Self.expectAnswer(
                check,
                subject,
                customer,
                .production,
                nil,
                "invalidating a group removes the answers holding it, byte for byte (\"gre\\u{301}\"), also one "
                    + "holding \"gr\\u{E9}\" too"
            )
        }
        try check.expectKept(
            try await Self.lockFreeWrite(
                answerCaches.other,
                ConformanceValues.answer(holding: ["gr\u{E9}", "gre\u{301}"], fetchedAt: base + 12),
                for: "m5",
                in: .production,
                groups: ["gr\u{E9}", "gre\u{301}"],
                at: beforeSpelling
            ),
            false,
            "an answer holding a group invalidated after its generation is refused, byte for byte (\"gre\\u{301}\"), "
                + "also when it holds \"gr\\u{E9}\" too"
        )
    }

    func checkInvalidations(_ subject: ConformanceSubject) async throws {
        let check = Check.invalidations
        guard let answerCaches = subject.answers, let invalidations = subject.invalidations else { return }
        let writes: [(String, StoreEnvironment, [String])] = [
            ("c1", .sandbox, ["g1"]), ("c1", .production, ["g1"]), ("c2", .sandbox, ["g2"]),
            ("c2", .production, ["g2"]), ("c3", .sandbox, ["g3"]), ("c4", .sandbox, ["g1", "g4"]),
            ("c5", .production, ["g4"]), ("c6", .sandbox, []), ("2000000123456789", .production, ["g5"]),
        ]
        let base = ConformanceValues.wholeMilliseconds(subject.now) - 60_000
        var answers: [String: CachedGroupsAnswer] = [:]
        for (index, (customer, environment, groups)) in writes.enumerated() {
            // Each answer fetched a millisecond apart, so no two are equal however fast they are made.
            let answer = ConformanceValues.answer(holding: groups, fetchedAt: base + Int64(index))
            try await Self.keep(check, answerCaches.instance(index), answer, for: customer, in: environment)
            answers["\(customer) \(environment)"] = answer
        }
        // Throws unless exactly the answers of `kept` are still there.
        func expectKept(_ kept: Set<String>, after invalidation: String) async throws {
            for (customer, environment, _) in writes {
                let name = "\(customer) \(environment)"
                try await Self.expectAnswer(
                    check,
                    subject,
                    customer,
                    environment,
                    kept.contains(name) ? answers[name] : nil,
                    kept.contains(name)
                        ? "\(invalidation) leaves the answer of \(name) alone"
                        : "\(invalidation) removes the answer of \(name)"
                )
            }
        }
        var kept = Set(answers.keys)
        try await invalidations.other.invalidate(anyTransactionID: "c1")
        kept.subtract(["c1 Sandbox", "c1 Production"])
        try await expectKept(kept, after: "invalidating customer c1")
        try await invalidations.first.invalidate(groupID: "g2")
        kept.subtract(["c2 Sandbox", "c2 Production"])
        try await expectKept(kept, after: "invalidating group g2")
        try await invalidations.other.invalidate(groupID: "g4")
        kept.subtract(["c4 Sandbox", "c5 Production"])
        try await expectKept(kept, after: "invalidating group g4")
        try await invalidations.other.invalidate(groupID: "g7")
        try await expectKept(kept, after: "invalidating group g7, which no answer holds")
        try await invalidations.first.invalidateAll()
        try await expectKept([], after: "invalidating everyone")
    }
}
