import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy

extension SharedGroupsCacheConformance {
    func checkAnswers(_ cache: any SharedGroupsCache) async throws {
        let check = Check.answers
        let first = Self.answer("g1")
        try check.expect(
            try await cache.answer(anyTransactionID: "c1", in: .sandbox),
            nil,
            "an empty cache holds no answer"
        )
        try await cache.setAnswer(first, anyTransactionID: "c1", in: .sandbox, timeToLive: .seconds(3600))
        try check.expect(
            try await cache.answer(anyTransactionID: "c1", in: .sandbox),
            first,
            "an answer reads back as written"
        )
        try check.expect(
            try await cache.answer(anyTransactionID: "c1", in: .production),
            nil,
            "an answer is kept per environment"
        )
        try check.expect(
            try await cache.answer(anyTransactionID: "c2", in: .sandbox),
            nil,
            "an answer is kept per customer"
        )
        let negative = CachedGroupsAnswer(kind: .notFound, body: [], fetchedAt: first.fetchedAt)
        try await cache.setAnswer(negative, anyTransactionID: "c2", in: .sandbox, timeToLive: .seconds(3600))
        try check.expect(
            try await cache.answer(anyTransactionID: "c2", in: .sandbox),
            negative,
            "a negative answer reads back"
        )
        // Expiry: polled, not timed, so a busy machine cannot fail it; a cache that never expires
        // fails after ten seconds.
        try await cache.setAnswer(first, anyTransactionID: "c3", in: .sandbox, timeToLive: .milliseconds(200))
        let deadline = ContinuousClock.now + .seconds(10)
        var kept = try await cache.answer(anyTransactionID: "c3", in: .sandbox)
        while kept != nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            kept = try await cache.answer(anyTransactionID: "c3", in: .sandbox)
        }
        try check.expect(kept, nil, "an answer is gone within ten seconds of a 200 ms time to live")
    }

    func checkConditionalWrites(_ cache: any SharedGroupsCache) async throws {
        let check = Check.conditionalWrites
        let reads = readsWhenFetchLockTaken
        let first = Self.answer("g1")
        try check.expect(
            try await Self.acquire(cache, "o1"),
            FetchLockAttempt(acquired: true, answer: nil, generation: Self.generation(0, 0, 0)),
            "the first caller takes the lock, with no answer and generation 0/0/0"
        )
        try check.expect(
            try await Self.acquire(cache, "o2"),
            FetchLockAttempt(acquired: false, answer: nil, generation: reads ? Self.generation(0, 0, 0) : nil),
            "another caller does not take a held lock"
        )
        try check.expect(
            try await Self.write(cache, first, groups: ["g1"], at: Self.generation(0, 0, 0), releasing: "o1"),
            true,
            "a write at the current generation is kept"
        )
        try check.expect(
            try await cache.answer(anyTransactionID: "c1", in: .sandbox),
            first,
            "the kept write reads back"
        )
        try check.expect(
            try await Self.acquire(cache, "o2"),
            FetchLockAttempt(acquired: true, answer: first, generation: Self.generation(0, 0, 0)),
            "the write released the lock, and the next holder reads the answer kept meanwhile"
        )
        try await cache.invalidate(anyTransactionID: "c1")
        try check.expect(
            try await Self.write(
                cache,
                Self.answer("g2"),
                groups: ["g2"],
                at: Self.generation(0, 0, 0),
                releasing: "o2"
            ),
            false,
            "a write read before the customer's invalidation is refused"
        )
        try check.expect(
            try await cache.answer(anyTransactionID: "c1", in: .sandbox),
            nil,
            "the invalidation removed the answer"
        )
        try check.expect(
            try await Self.acquire(cache, "o3"),
            FetchLockAttempt(acquired: true, answer: nil, generation: Self.generation(1, 0, 0)),
            "a refused write still released the lock, and the customer's generation moved"
        )
        try await cache.invalidateAll()
        try await cache.releaseFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "o3")
        try check.expect(
            try await Self.acquire(cache, "o4"),
            FetchLockAttempt(acquired: true, answer: nil, generation: Self.generation(1, 1, 0)),
            "invalidating everyone moves the shared generation"
        )
        try await cache.invalidate(groupID: "g1")
        try await cache.releaseFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "o4")
        try check.expect(
            try await Self.acquire(cache, "o5"),
            FetchLockAttempt(acquired: true, answer: nil, generation: Self.generation(1, 1, 1)),
            "invalidating a group moves the group generation"
        )
        try check.expect(
            try await Self.write(cache, first, groups: ["g1"], at: Self.generation(1, 1, 0), releasing: "o5"),
            false,
            "an answer holding a group invalidated after its generation is refused"
        )
        let late = Self.answer("g3")
        _ = try await Self.acquire(cache, "o6")
        try check.expect(
            try await Self.write(cache, late, groups: ["g3"], at: Self.generation(1, 1, 1), releasing: "o5"),
            true,
            "a writer whose lock passed to another keeps its answer when nothing was invalidated since"
        )
        try check.expect(
            try await Self.acquire(cache, "o7"),
            FetchLockAttempt(
                acquired: false,
                answer: reads ? late : nil,
                generation: reads ? Self.generation(1, 1, 1) : nil
            ),
            "that write leaves the new holder's lock alone"
        )
    }

    func checkFetchLock(_ cache: any SharedGroupsCache) async throws {
        let check = Check.fetchLock
        let lifetime = Self.lockLifetime
        try check.expect(
            try await cache.acquireFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "o1", timeToLive: lifetime),
            true,
            "a free lock is taken"
        )
        try check.expect(
            try await cache.acquireFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "o2", timeToLive: lifetime),
            false,
            "a held lock is not taken by another owner"
        )
        try check.expect(
            try await cache.acquireFetchLock(
                anyTransactionID: "c1",
                in: .production,
                owner: "o2",
                timeToLive: lifetime
            ),
            true,
            "locks are kept per environment"
        )
        try await cache.releaseFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "o2")
        try check.expect(
            try await cache.acquireFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "o3", timeToLive: lifetime),
            false,
            "only the owner releases a lock"
        )
        try await cache.releaseFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "o1")
        try check.expect(
            try await cache.acquireFetchLock(anyTransactionID: "c1", in: .sandbox, owner: "o3", timeToLive: lifetime),
            true,
            "a lock its owner released is taken again"
        )
    }

    func checkRateLimits(_ cache: any SharedGroupsCache) async throws {
        let check = Check.rateLimits
        let soon = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 600).rounded(.down))
        let later = soon.addingTimeInterval(60)
        try check.expect(
            try await cache.rateLimitedUntil(.customerGroups, in: .sandbox),
            nil,
            "no instant is set at first"
        )
        try await cache.setRateLimitedUntil(later, for: .customerGroups, in: .sandbox)
        try await cache.setRateLimitedUntil(soon, for: .customerGroups, in: .sandbox)
        try check.expect(
            try await cache.rateLimitedUntil(.customerGroups, in: .sandbox),
            later,
            "an earlier instant never replaces a later one"
        )
        try check.expect(
            try await cache.rateLimitedUntil(.customerGroups, in: .production),
            nil,
            "instants are kept per environment"
        )
        try check.expect(
            try await cache.rateLimitedUntil(.groupMembers, in: .sandbox),
            nil,
            "instants are kept per endpoint"
        )
    }

    func checkFleetBudget(_ cache: any SharedGroupsCache) async throws {
        let check = Check.fleetBudget
        let budget = FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: 0.001, burst: 3)
        guard cache.keepsFleetBudget else {
            try check.expect(
                try await cache.takeBudgetToken(from: budget, maximumWait: .zero),
                .notSupported,
                "a cache that keeps no fleet budget says so"
            )
            return
        }
        guard let makeSecondInstance else {
            throw ConformanceFailure(
                check: check,
                requirement: "a cache that keeps the fleet's budget is shown sharing it with a second instance",
                expected: "makeSecondInstance",
                actual: "nil"
            )
        }
        let second = try await makeSecondInstance(cache)
        for (index, instance) in [cache, cache, second].enumerated() {
            try check.expect(
                try await instance.takeBudgetToken(from: budget, maximumWait: .zero),
                .taken(wait: .zero),
                "token \(index + 1) of a burst of 3 is taken at once (the third by a second instance)"
            )
        }
        for instance in [second, cache] {
            let fourth = try await instance.takeBudgetToken(from: budget, maximumWait: .zero)
            let refused: Bool = if case .notTaken = fourth { true } else { false }
            try check.expect(refused, true, "a fourth token at once, beyond the burst, is refused (got \(fourth))")
        }
        let others = [
            ("endpoint", FleetBudget(.groupMembers, in: .sandbox, ratePerSecond: 0.001, burst: 3)),
            ("environment", FleetBudget(.customerGroups, in: .production, ratePerSecond: 0.001, burst: 3)),
        ]
        for (concern, other) in others {
            try check.expect(
                try await second.takeBudgetToken(from: other, maximumWait: .zero),
                .taken(wait: .zero),
                "each \(concern) has a budget of its own: its first token is taken at once"
            )
        }
    }

    func checkInvalidationCount(_ cache: any SharedGroupsCache) async throws {
        let check = Check.invalidationCount
        guard var count = try await cache.invalidationCount() else { return }
        let invalidations: [(String, @Sendable (any SharedGroupsCache) async throws -> Void)] = [
            ("a customer's invalidation", { try await $0.invalidate(anyTransactionID: "c1") }),
            ("a group's invalidation", { try await $0.invalidate(groupID: "g1") }),
            ("invalidating everyone", { try await $0.invalidateAll() }),
        ]
        for (name, invalidate) in invalidations {
            try await invalidate(cache)
            let next = try await cache.invalidationCount()
            try check.expect(next.map { $0 != count }, true, "\(name) raises the invalidation count above \(count)")
            count = next ?? count
        }
    }

    func checkInvalidations(_ cache: any SharedGroupsCache) async throws {
        let check = Check.invalidations
        let writes: [(String, StoreEnvironment, String)] = [
            ("c1", .sandbox, "g1"), ("c1", .production, "g1"), ("c2", .sandbox, "g2"), ("c2", .production, "g2"),
            ("c3", .sandbox, "g3"),
        ]
        var answers: [String: CachedGroupsAnswer] = [:]
        for (index, (customer, environment, group)) in writes.enumerated() {
            // Each answer fetched a second apart, so no two are equal however fast they are made.
            let first = Self.answer(group)
            let answer = CachedGroupsAnswer(
                kind: first.kind,
                body: first.body,
                fetchedAt: first.fetchedAt.addingTimeInterval(-Double(index))
            )
            let write = AnswerWrite(
                answer,
                anyTransactionID: customer,
                in: environment,
                timeToLive: .seconds(3600),
                groupIDs: [group],
                ifGeneration: try await cache.invalidationGeneration(anyTransactionID: customer, in: environment)
            )
            try check.expect(try await cache.setAnswer(write), true, "a write at the current generation is kept")
            answers["\(customer) \(environment)"] = answer
        }
        // Throws unless exactly the answers of `kept` are still there.
        func expectKept(_ kept: Set<String>, after invalidation: String) async throws {
            for (customer, environment, _) in writes {
                let name = "\(customer) \(environment)"
                try check.expect(
                    try await cache.answer(anyTransactionID: customer, in: environment),
                    kept.contains(name) ? answers[name] : nil,
                    kept.contains(name)
                        ? "\(invalidation) leaves the answer of \(name) alone"
                        : "\(invalidation) removes the answer of \(name)"
                )
            }
        }
        try await cache.invalidate(anyTransactionID: "c1")
        try await expectKept(["c2 Sandbox", "c2 Production", "c3 Sandbox"], after: "invalidating customer c1")
        try await cache.invalidate(groupID: "g2")
        try await expectKept(["c3 Sandbox"], after: "invalidating group g2")
        try await cache.invalidateAll()
        try await expectKept([], after: "invalidating everyone")
    }
}
