import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy

/// The checks of the fleet's rate-limit state: `Retry-After` instants, and the budget's tokens,
/// waits and refill.
extension SharedGroupsCacheConformance {
    func checkRateLimits(_ subject: ConformanceSubject) async throws {
        let check = Check.rateLimits
        guard let limits = subject.rateLimits else { return }
        let (one, two) = (limits.first, limits.other)
        let now = ConformanceValues.wholeMilliseconds(subject.now)
        func instant(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
        // Not whole seconds: a store that keeps seconds must round up, never down.
        let soon = instant(now + 600_400)
        let later = instant(now + 660_650)
        let describe: (Date?) -> String = { $0.map { "\(ConformanceValues.wholeMilliseconds($0)) ms" } ?? "none" }
        func expectInstant(
            _ endpoint: GroupsEndpoint,
            _ environment: StoreEnvironment,
            _ expected: Date?,
            _ requirement: String
        )
            async throws
        {
            for cache in limits.all {
                let read = try await cache.rateLimitedUntil(endpoint, in: environment)
                let matches =
                    switch (read, expected) {
                    case (nil, nil): true
                    // Never earlier than set; a store may round up, by less than a second.
                    case (let read?, let expected?): read >= expected && read < expected.addingTimeInterval(1)
                    default: false
                    }
                try check.require(matches, requirement, expected: describe(expected), actual: describe(read))
            }
        }
        try await expectInstant(.customerGroups, .sandbox, nil, "no instant is set at first")
        try await one.setRateLimitedUntil(later, for: .customerGroups, in: .sandbox)
        try await expectInstant(
            .customerGroups,
            .sandbox,
            later,
            "an instant reads back as set, never earlier, from either instance"
        )
        try await two.setRateLimitedUntil(soon, for: .customerGroups, in: .sandbox)
        try await expectInstant(.customerGroups, .sandbox, later, "an earlier instant never replaces a later one")
        try await expectInstant(.customerGroups, .production, nil, "instants are kept per environment")
        try await expectInstant(.groupMembers, .sandbox, nil, "instants are kept per endpoint")
        try await two.setRateLimitedUntil(soon, for: .customerGroups, in: .production)
        try await expectInstant(.customerGroups, .production, soon, "instants are kept per environment")
        try await expectInstant(.customerGroups, .sandbox, later, "instants are kept per environment")
        // An instant that passes reads as none, and a later one is kept after it.
        let short: Int64 = subject.clock == nil ? 300 : 2_005
        try await one.setRateLimitedUntil(instant(now + short), for: .groupMembers, in: .production)
        if subject.clock != nil {
            try await subject.pass(.milliseconds(1_500))
            try await expectInstant(
                .groupMembers,
                .production,
                instant(now + short),
                "an instant is kept until it passes"
            )
        }
        let passed = try await subject.eventually(after: .milliseconds(subject.clock == nil ? 300 : 1_000)) {
            try await two.rateLimitedUntil(.groupMembers, in: .production) == nil
        }
        try check.require(
            passed,
            "an instant reads as none once it has passed",
            expected: "none",
            actual: describe(try await two.rateLimitedUntil(.groupMembers, in: .production))
        )
        let next = instant(ConformanceValues.wholeMilliseconds(subject.now) + 600_000)
        try await two.setRateLimitedUntil(next, for: .groupMembers, in: .production)
        try await expectInstant(.groupMembers, .production, next, "an instant set after another passed is kept")
    }

    /// Throws unless `token` is `taken` (or not, per `taken`) with a wait within `wait` (in
    /// seconds; any wait when `nil`).
    static func expectToken(
        _ check: Check,
        _ token: FleetBudgetToken,
        taken: Bool,
        wait: ClosedRange<Double>?,
        _ requirement: String
    ) throws(ConformanceFailure) {
        let expected =
            (taken ? "taken" : "not taken")
            + (wait.map { ", wait \(($0.lowerBound * 1000).rounded()) to \(($0.upperBound * 1000).rounded()) ms" } ?? "")
        let matches =
            switch token {
            case .taken(let actual): taken && wait.map { $0.contains(ConformanceValues.seconds(actual)) } ?? true
            case .notTaken(let actual): !taken && wait.map { $0.contains(ConformanceValues.seconds(actual)) } ?? true
            }
        try check.require(matches, requirement, expected: expected, actual: ConformanceValues.describe(token))
    }

    /// The wait, in seconds, until `tokens` more are due at `rate` a second, give or take what
    /// refilled in `elapsed` seconds and a millisecond of rounding.
    static func waitRange(tokens: Double, rate: Double, elapsed: Double) -> ClosedRange<Double> {
        max(0, tokens / rate - elapsed - 0.002)...(tokens / rate + 0.002)
    }

    func checkFleetBudget(_ subject: ConformanceSubject) async throws {
        let check = Check.fleetBudget
        guard let budgets = subject.fleetBudget else { return }
        let budget = FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: 0.001, burst: 3)
        guard let second = budgets.second else {
            throw ConformanceFailure(
                check: check,
                requirement: "a cache that keeps the fleet's budget is shown sharing it with a second instance",
                expected: "makeSecondInstance",
                actual: "nil"
            )
        }
        let cache = budgets.first
        // Measured on the wall clock, which the stores refill by (Redis's TIME, the in-memory
        // cache's Date()): a clock that steps moves both.
        let started = Date()
        func elapsed() -> Double { subject.clock == nil ? max(0, Date().timeIntervalSince(started)) : 0 }
        for (index, instance) in [cache, cache, second].enumerated() {
            try Self.expectToken(
                check,
                try await instance.takeBudgetToken(from: budget, maximumWait: .zero),
                taken: true,
                wait: 0...0,
                "token \(index + 1) of a burst of 3 is taken at once (the third by a second instance)"
            )
        }
        for instance in [second, cache] {
            try Self.expectToken(
                check,
                try await instance.takeBudgetToken(from: budget, maximumWait: .zero),
                taken: false,
                wait: nil,
                "a fourth token at once, beyond the burst, is refused"
            )
        }
        // 0.001 a second: a token every 1,000 s. A caller that may wait reserves the next one and
        // must be told to wait for it, else the fleet sends above its rate.
        try Self.expectToken(
            check,
            try await second.takeBudgetToken(from: budget, maximumWait: .seconds(1_500)),
            taken: true,
            wait: Self.waitRange(tokens: 1, rate: 0.001, elapsed: elapsed()),
            "a token reserved ahead is taken with the wait until it is due (1,000 s at 0.001 a second)"
        )
        try Self.expectToken(
            check,
            try await cache.takeBudgetToken(from: budget, maximumWait: .seconds(2_500)),
            taken: true,
            wait: Self.waitRange(tokens: 2, rate: 0.001, elapsed: elapsed()),
            "a second token reserved ahead waits for the first (2,000 s)"
        )
        try Self.expectToken(
            check,
            try await second.takeBudgetToken(from: budget, maximumWait: .seconds(2_500)),
            taken: false,
            wait: Self.waitRange(tokens: 3, rate: 0.001, elapsed: elapsed()),
            "a token due after the caller's maximum wait is not taken, and the wait says when it would be (3,000 s)"
        )
        // A bucket the store does not hold starts with the budget's initial tokens, not full: a lost
        // bucket must not let a whole burst through on top of the reservations it forgot.
        let fresh = FleetBudget(.groupMembers, in: .production, ratePerSecond: 0.001, burst: 3, initialTokens: 1)
        try Self.expectToken(
            check,
            try await cache.takeBudgetToken(from: fresh, maximumWait: .zero),
            taken: true,
            wait: 0...0,
            "a new bucket starts with the budget's initial tokens (1 of a burst of 3): its first token is taken"
        )
        try Self.expectToken(
            check,
            try await second.takeBudgetToken(from: fresh, maximumWait: .zero),
            taken: false,
            wait: nil,
            "a new bucket starts with the budget's initial tokens (1 of a burst of 3), not full: no second token"
        )
        let others = [
            ("endpoint", FleetBudget(.groupMembers, in: .sandbox, ratePerSecond: 0.001, burst: 3)),
            ("environment", FleetBudget(.customerGroups, in: .production, ratePerSecond: 0.001, burst: 3)),
        ]
        for (concern, other) in others {
            try Self.expectToken(
                check,
                try await second.takeBudgetToken(from: other, maximumWait: .zero),
                taken: true,
                wait: 0...0,
                "each \(concern) has a budget of its own: its first token is taken at once"
            )
        }
    }

    func checkBudgetRefill(_ subject: ConformanceSubject) async throws {
        let check = Check.budgetRefill
        guard let budgets = subject.fleetBudget else { return }
        let budget = FleetBudget(.groupMembers, in: .production, ratePerSecond: 5, burst: 5)
        func take(_ index: Int) async throws -> FleetBudgetToken {
            try await budgets.instance(index).takeBudgetToken(from: budget, maximumWait: .zero)
        }
        let started = Date()
        for index in 0..<5 {
            try Self.expectToken(
                check,
                try await take(index),
                taken: true,
                wait: 0...0,
                "a new budget gives its burst at once (token \(index + 1) of 5)"
            )
        }
        guard subject.clock != nil else {
            return try await checkRefillInRealTime(subject, budgets, budget, since: started)
        }
        try Self.expectToken(
            check,
            try await take(5),
            taken: false,
            wait: nil,
            "a burst of 5 gives 5 tokens at once, not 6"
        )
        try await subject.pass(.milliseconds(10))
        try Self.expectToken(
            check,
            try await take(6),
            taken: false,
            wait: nil,
            "the budget refills at its rate, no faster: 10 ms after it was emptied, 5 a second have refilled 0.05 token"
        )
        try Self.expectToken(
            check,
            try await take(7),
            taken: false,
            wait: 0.189...0.191,
            "the wait of an emptied budget is the time until its next token: 190 ms, 10 ms after it was emptied, at 5 "
                + "a second"
        )
        try await subject.pass(.milliseconds(195))
        try Self.expectToken(
            check,
            try await take(8),
            taken: true,
            wait: 0...0,
            "the budget refills at its rate: 205 ms after it was emptied, 5 a second have refilled a token"
        )
        try Self.expectToken(
            check,
            try await take(9),
            taken: false,
            wait: nil,
            "the budget refills at its rate, no faster: one token in 205 ms, not two"
        )
        try await subject.pass(.seconds(10))
        var taken = 0
        for index in 0..<7 {
            if case .taken = try await take(index) { taken += 1 }
        }
        try check.expect(taken, 5, "a budget refills up to its burst and no further: 5 tokens after 10 s")
    }

    /// The refill against real time: at most the burst and what the rate adds in the time measured
    /// around the calls (a margin no busy machine can break), and a token again once emptied.
    private func checkRefillInRealTime(
        _ subject: ConformanceSubject,
        _ budgets: ConformanceSubject.Instances<any SharedFleetBudget>,
        _ budget: FleetBudget,
        since started: Date
    ) async throws {
        let check = Check.budgetRefill
        var taken = 5
        // Calls one after another for 50 ms and at least 30 calls: at 5 a second, a quarter of a token
        // refills (and at 5,000 a second, one every 0.2 ms). Only a yield between them: a busy machine
        // stretches every sleep, and calls spread over seconds would let a bucket that refills too
        // fast look right.
        var attempts = 0
        while attempts < 30 || Date().timeIntervalSince(started) < 0.05 {
            if case .taken = try await budgets.instance(attempts).takeBudgetToken(from: budget, maximumWait: .zero) {
                taken += 1
            }
            attempts += 1
            if attempts >= 10_000 { break }
            await Task.yield()
        }
        // The wall clock the stores refill by; a clock set back refills nothing.
        let seconds = max(0, Date().timeIntervalSince(started))
        let most = 5 + Int((5 * seconds).rounded(.down)) + 1
        try check.require(
            taken <= most,
            "the budget refills at its rate, no faster: a burst of 5 and 5 a second give at most the burst and "
                + "the rate times the time measured around the calls, and a token of margin",
            expected: "at most \(most) tokens in \(Int(seconds * 1000)) ms",
            actual: "\(taken) tokens"
        )
        let refilled = try await subject.eventually(after: .milliseconds(200)) {
            if case .taken = try await budgets.other.takeBudgetToken(from: budget, maximumWait: .zero) { return true }
            return false
        }
        try check.require(
            refilled,
            "an emptied budget gives a token again at its rate (within ten seconds at 5 a second)",
            expected: "taken",
            actual: "not taken"
        )
    }

    func checkRefreshTokens(_ subject: ConformanceSubject) async throws {
        let check = Check.refreshTokens
        guard let budgets = subject.fleetBudget else { return }
        let (one, two) = (budgets.first, budgets.other)
        let budget = FleetBudget(.customerGroups, in: .production, ratePerSecond: 0.001, burst: 4)
        // Measured on the wall clock, which the stores refill by (Redis's TIME, the in-memory
        // cache's Date()): a clock that steps moves both.
        let started = Date()
        func elapsed() -> Double { subject.clock == nil ? max(0, Date().timeIntervalSince(started)) : 0 }
        try Self.expectToken(
            check,
            try await one.takeBudgetToken(from: budget, keeping: 2),
            taken: true,
            wait: 0...0,
            "a refresh takes a token when the reserve stays banked after it (4 banked, reserve 2)"
        )
        try Self.expectToken(
            check,
            try await two.takeBudgetToken(from: budget, keeping: 2),
            taken: true,
            wait: 0...0,
            "a refresh takes a token when the reserve stays banked after it (3 banked, reserve 2)"
        )
        try Self.expectToken(
            check,
            try await one.takeBudgetToken(from: budget, keeping: 2),
            taken: false,
            wait: Self.waitRange(tokens: 1, rate: 0.001, elapsed: elapsed()),
            "a refresh takes no token the reserve needs, and says when one could be (2 banked, reserve 2)"
        )
        try Self.expectToken(
            check,
            try await two.takeBudgetToken(from: budget, maximumWait: .zero),
            taken: true,
            wait: 0...0,
            "a first fetch takes from the reserve: one bucket for both token calls"
        )
        try Self.expectToken(
            check,
            try await one.takeBudgetToken(from: budget, keeping: 0),
            taken: true,
            wait: 0...0,
            "a refresh with no reserve takes the last token banked"
        )
        try Self.expectToken(
            check,
            try await two.takeBudgetToken(from: budget, keeping: 0),
            taken: false,
            wait: Self.waitRange(tokens: 1, rate: 0.001, elapsed: elapsed()),
            "a refresh never reserves a token ahead"
        )
        try Self.expectToken(
            check,
            try await one.takeBudgetToken(from: budget, maximumWait: .seconds(1_500)),
            taken: true,
            wait: Self.waitRange(tokens: 1, rate: 0.001, elapsed: elapsed()),
            "a refused refresh reserved nothing: the next first fetch waits for one token only (1,000 s)"
        )
        let empty = FleetBudget(.groupMembers, in: .sandbox, ratePerSecond: 0.001, burst: 3, initialTokens: 0)
        try Self.expectToken(
            check,
            try await two.takeBudgetToken(from: empty, keeping: 0),
            taken: false,
            wait: Self.waitRange(tokens: 1, rate: 0.001, elapsed: elapsed()),
            "a new bucket with no initial tokens gives a refresh none, and says the next is due in 1,000 s"
        )
    }
}
