import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy

/// One seeded random sequence of operations on a cache and its second instance, each answer judged
/// by a ``ContractModel`` as it comes: ``SharedGroupsCacheConformance/Check/operationSequences``.
///
/// Only the operations of the concerns the store provides are drawn (a write that releases the
/// lock needs the fetch lock and answers; the clock moves only when it is the suite's).
///
/// The customers include ids that differ only in case or normalisation, the groups likewise; each
/// operation goes to either instance. On the suite's clock, answers and locks live seconds and the
/// clock moves between operations; on the cache's own clock they live an hour (expiry is then the
/// directed checks' to prove) and the budget is judged against the time measured around each call.
struct OperationSequence {
    private let subject: ConformanceSubject
    private let answers: ConformanceSubject.Instances<any SharedAnswerCache>?
    private let locks: ConformanceSubject.Instances<any SharedFetchLock>?
    private let rateLimits: ConformanceSubject.Instances<any SharedRateLimitState>?
    private let budgets: ConformanceSubject.Instances<any SharedFleetBudget>?
    private let invalidations: ConformanceSubject.Instances<any SharedInvalidations>?
    private let seed: UInt64
    private let readsWhenFetchLockTaken: Bool
    private var random: SeededRandom
    private var model = ContractModel()
    private var buckets: [BudgetBucketModel]
    private var history: [String] = []
    /// Who each answer written was for, by its fetch time (unique to each answer).
    private var origins: [Int64: String] = [:]
    private var written: Int64 = 0
    private let firstFetch: Int64

    static let customers = [
        "c1", "C1", "admin1", "ADMIN1", "caf\u{E9}", "cafe\u{301}", "2000000123456789", "c7",
    ]
    static let groups = ["g1", "G1", "g2", "gr\u{E9}", "gre\u{301}"]
    static let owners = ["o1", "o2", "o3"]

    private enum Kind: CaseIterable {
        case answer, answerAndCount, count, generation, freshWrite, lockFreeWrite, acquire, acquireAndRead
        case release, combinedWrite, invalidateCustomer, invalidateGroup, invalidateAll, setRateLimit
        case readRateLimit, take, takeKeeping, advance

        var weight: Int {
            switch self {
            case .answer: 12
            case .answerAndCount, .generation: 8
            case .lockFreeWrite: 10
            case .acquireAndRead, .combinedWrite: 7
            case .advance: 6
            case .acquire, .invalidateCustomer, .invalidateGroup, .take: 5
            case .count, .freshWrite, .release, .takeKeeping: 4
            case .setRateLimit, .readRateLimit: 3
            case .invalidateAll: 1
            }
        }
    }

    init(subject: ConformanceSubject, seed: UInt64, readsWhenFetchLockTaken: Bool) {
        self.subject = subject
        answers = subject.answers
        locks = subject.fetchLock
        rateLimits = subject.rateLimits
        budgets = subject.fleetBudget
        invalidations = subject.invalidations
        self.seed = seed
        self.readsWhenFetchLockTaken = readsWhenFetchLockTaken
        random = SeededRandom(seed: seed)
        firstFetch = ConformanceValues.wholeMilliseconds(subject.now) - 60_000
        let onSuiteClock = subject.clock != nil
        buckets = [
            BudgetBucketModel(
                FleetBudget(.customerGroups, in: .sandbox, ratePerSecond: onSuiteClock ? 2 : 1, burst: 3)
            ),
            // A bucket that starts with fewer tokens than its burst, as the service's do.
            BudgetBucketModel(
                FleetBudget(
                    .groupMembers,
                    in: .production,
                    ratePerSecond: onSuiteClock ? 0.5 : 0.2,
                    burst: 2,
                    initialTokens: 1
                )
            ),
        ]
    }

    /// Whether the store provides what an operation of `kind` calls.
    private func provides(_ kind: Kind) -> Bool {
        switch kind {
        case .answer, .generation, .freshWrite, .lockFreeWrite: answers != nil
        case .answerAndCount, .count, .invalidateCustomer, .invalidateGroup, .invalidateAll: invalidations != nil
        case .acquire, .acquireAndRead, .release: locks != nil
        case .combinedWrite: locks != nil && answers != nil
        case .setRateLimit, .readRateLimit: rateLimits != nil
        case .take, .takeKeeping: budgets != nil
        case .advance: subject.clock != nil
        }
    }

    mutating func run(operations: Int) async throws {
        let kinds = Kind.allCases.filter(provides)
        guard kinds.contains(where: { $0 != .advance }) else { return }
        for _ in 0..<operations { try await step(kinds) }
        // Last, every answer and the count, through both instances.
        for customer in Self.customers {
            for environment in StoreEnvironment.allCases {
                for index in (subject.second == nil ? 0..<1 : 0..<2) {
                    try await readAnswer(customer, environment, instance: index)
                }
            }
        }
        for index in (subject.second == nil ? 0..<1 : 0..<2) { try await readCount(instance: index) }
    }

    // MARK: Steps

    private mutating func step(_ kinds: [Kind]) async throws {
        var draw = random.below(kinds.reduce(0) { $0 + $1.weight })
        var kind = kinds[0]
        for candidate in kinds {
            if draw < candidate.weight {
                kind = candidate
                break
            }
            draw -= candidate.weight
        }
        let instance = subject.second == nil ? 0 : random.below(2)
        let customer = random.pick(Self.customers)
        let environment = random.pick(StoreEnvironment.allCases)
        switch kind {
        case .answer: try await readAnswer(customer, environment, instance: instance)
        case .answerAndCount: try await readAnswerAndCount(customer, environment, instance: instance)
        case .count: try await readCount(instance: instance)
        case .generation: try await readGeneration(customer, environment, instance: instance)
        case .freshWrite:
            try await readGeneration(customer, environment, instance: instance)
            try await conditionalWrite(customer, environment, instance: instance, releasing: nil, latest: true)
        case .lockFreeWrite: try await conditionalWrite(customer, environment, instance: instance, releasing: nil)
        case .combinedWrite:
            let holder = model.locks[ContractModel.Slot(customer, environment)]?.owner
            let owner = holder.flatMap { random.chance(70) ? $0 : nil } ?? random.pick(Self.owners)
            try await conditionalWrite(customer, environment, instance: instance, releasing: owner)
        case .acquire, .acquireAndRead: try await acquire(customer, environment, instance: instance)
        case .release: try await release(customer, environment, instance: instance)
        case .invalidateCustomer:
            try await invalidate(
                .customer(Array(customer.utf8)),
                "invalidate(anyTransactionID: \(quoted(customer)))",
                instance
            )
        case .invalidateGroup:
            let group = random.pick(Self.groups)
            try await invalidate(.group(group), "invalidate(groupID: \(quoted(group)))", instance)
        case .invalidateAll: try await invalidate(.all, "invalidateAll()", instance)
        case .setRateLimit: try await setRateLimit(instance: instance)
        case .readRateLimit: try await readRateLimit(instance: instance)
        case .take: try await take(instance: instance, refresh: false)
        case .takeKeeping: try await take(instance: instance, refresh: true)
        case .advance:
            let duration = Duration.milliseconds(random.pick([10, 50, 200, 1_000, 2_500, 7_000]))
            note(nil, "the clock moves \(ConformanceValues.milliseconds(duration)) ms")
            subject.clock?.advance(by: duration)
        }
    }

    private func quoted(_ id: String) -> String { ConformanceValues.quoted(id) }

    /// Records an operation, on `instance` (`nil` for the clock).
    private mutating func note(_ instance: Int?, _ operation: String) {
        let name = instance.map { subject.second == nil ? "" : $0 == 0 ? "first: " : "second: " } ?? ""
        history.append("\(name)\(operation)")
    }

    /// Adds the answer to the operation recorded last.
    private mutating func answered(_ text: String) {
        guard let last = history.popLast() else { return }
        history.append("\(last) → \(text)")
    }

    private func failure(_ mismatch: ContractModel.Mismatch, actual: String) -> ConformanceFailure {
        ConformanceFailure(
            check: .operationSequences,
            requirement: mismatch.requirement,
            expected: mismatch.expected,
            actual: actual,
            seed: seed,
            operations: history
        )
    }

    /// An answer as a failure shows it, with whom it was written for.
    private func describe(_ answer: CachedGroupsAnswer?) -> String {
        let text = ConformanceValues.describe(answer)
        guard let answer, let origin = origins[ConformanceValues.wholeMilliseconds(answer.fetchedAt)] else {
            return text
        }
        return "\(text), written for \(origin)"
    }

    /// Now, in seconds: on the suite's clock, or on the wall clock the stores refill by.
    private var timeline: Double { subject.now.timeIntervalSince1970 }

    // MARK: Answers

    private mutating func judgeAnswer(_ answer: CachedGroupsAnswer?, _ slot: ContractModel.Slot) throws {
        if let mismatch = model.read(slot, answer, now: subject.now) {
            throw failure(mismatch, actual: describe(answer))
        }
    }

    private mutating func readAnswer(_ customer: String, _ environment: StoreEnvironment, instance: Int) async throws {
        guard let answers else { return }
        note(instance, "answer(anyTransactionID: \(quoted(customer)), in: \(environment))")
        let answer = try await answers.instance(instance).answer(anyTransactionID: customer, in: environment)
        answered(describe(answer))
        try judgeAnswer(answer, ContractModel.Slot(customer, environment))
    }

    private mutating func readAnswerAndCount(
        _ customer: String,
        _ environment: StoreEnvironment,
        instance: Int
    ) async throws {
        note(instance, "answerAndInvalidationCount(anyTransactionID: \(quoted(customer)), in: \(environment))")
        guard let invalidations else { return }
        let read = try await invalidations.instance(instance).answerAndInvalidationCount(
            anyTransactionID: customer,
            in: environment
        )
        answered("\(describe(read.answer)), count \(read.invalidationCount.map(String.init) ?? "nil")")
        try judgeAnswer(read.answer, ContractModel.Slot(customer, environment))
        if let mismatch = model.readCount(read.invalidationCount) {
            throw failure(mismatch, actual: read.invalidationCount.map(String.init) ?? "nil")
        }
    }

    private mutating func readCount(instance: Int) async throws {
        guard let invalidations else { return }
        note(instance, "invalidationCount()")
        let count = try await invalidations.instance(instance).invalidationCount()
        answered(count.map(String.init) ?? "nil")
        if let mismatch = model.readCount(count) { throw failure(mismatch, actual: count.map(String.init) ?? "nil") }
    }

    private mutating func readGeneration(
        _ customer: String,
        _ environment: StoreEnvironment,
        instance: Int
    ) async throws {
        note(instance, "invalidationGeneration(anyTransactionID: \(quoted(customer)), in: \(environment))")
        guard let answers else { return }
        let generation = try await answers.instance(instance).invalidationGeneration(
            anyTransactionID: customer,
            in: environment
        )
        answered(ConformanceValues.describe(generation))
        let slot = ContractModel.Slot(customer, environment)
        if let mismatch = model.readGeneration(slot, generation, step: history.count) {
            throw failure(mismatch, actual: ConformanceValues.describe(generation))
        }
    }

    /// A new answer, fetched a millisecond before the one written last, holding up to two groups.
    private mutating func newAnswer(for customer: String, _ environment: StoreEnvironment) -> CachedGroupsAnswer {
        written += 1
        let fetchedAt = firstFetch - written
        origins[fetchedAt] = "\(quoted(customer)) in \(environment) at step \(history.count + 1)"
        if random.chance(10) { return ConformanceValues.notFound(fetchedAt: fetchedAt) }
        var groups: [String] = []
        for _ in 0..<random.below(3) {
            let group = random.pick(Self.groups)
            if !groups.contains(where: { Array($0.utf8) == Array(group.utf8) }) { groups.append(group) }
        }
        return ConformanceValues.answer(holding: groups, fetchedAt: fetchedAt)
    }

    /// A time to live: seconds on the suite's clock (never a whole number of the clock's steps, so
    /// no read falls on the instant it ends), an hour on the cache's own.
    private mutating func lifetime() -> Duration {
        guard subject.clock != nil else { return .milliseconds(3_600_005) }
        return .milliseconds(random.pick([2_005, 10_005, 3_600_005]))
    }

    private func expiry(_ lifetime: Duration) -> Date {
        subject.now.addingTimeInterval(ConformanceValues.seconds(lifetime))
    }

    /// The lock-free write (`releasing` `nil`) or the combined one, at a generation read earlier
    /// for the customer: the last one mostly (always when `latest`), an older one otherwise.
    private mutating func conditionalWrite(
        _ customer: String,
        _ environment: StoreEnvironment,
        instance: Int,
        releasing owner: String?,
        latest: Bool = false
    ) async throws {
        guard let answers else { return }
        let slot = ContractModel.Slot(customer, environment)
        let reads = model.generations(slot)
        guard let last = reads.last else { return try await readGeneration(customer, environment, instance: instance) }
        let (generation, readAt) = latest || random.chance(60) ? last : random.pick(reads)
        let answer = newAnswer(for: customer, environment)
        let groups = ConformanceValues.groups(of: answer) ?? []
        let lifetime = lifetime()
        let write = AnswerWrite(
            answer,
            anyTransactionID: customer,
            in: environment,
            timeToLive: lifetime,
            groupIDs: groups,
            ifGeneration: generation
        )
        let call = owner.map { "setAnswer(_:releasingFetchLock: \(quoted($0)))" } ?? "setAnswer(_:)"
        note(
            instance,
            "\(call) of \(ConformanceValues.describe(answer)) for \(quoted(customer)) in \(environment), "
                + "timeToLive \(ConformanceValues.milliseconds(lifetime)) ms, at the generation read at step \(readAt)"
        )
        let kept: Bool
        if let owner, let locks {
            kept = try await locks.instance(instance).setAnswer(write, releasingFetchLock: owner)
            model.release(slot, owner: owner)
        } else {
            kept = try await answers.instance(instance).setAnswer(write)
        }
        answered(kept ? "kept" : "refused")
        if let expected = model.mustKeep(slot, groups: groups, generationReadAt: readAt), kept != expected {
            let mismatch = ContractModel.Mismatch(
                requirement: ContractModel.writes,
                expected: expected ? "kept" : "refused"
            )
            throw failure(mismatch, actual: kept ? "kept" : "refused")
        }
        if kept { model.keep(slot, answer, groups: groups, expires: expiry(lifetime), indexed: true) }
    }

    // MARK: Locks

    private mutating func acquire(
        _ customer: String,
        _ environment: StoreEnvironment,
        instance: Int
    ) async throws {
        guard let locks else { return }
        let owner = random.pick(Self.owners)
        let lifetime: Duration =
            subject.clock == nil ? .milliseconds(3_600_005) : .milliseconds(random.pick([2_005, 30_005, 3_600_005]))
        let slot = ContractModel.Slot(customer, environment)
        let arguments =
            "anyTransactionID: \(quoted(customer)), in: \(environment), owner: \(quoted(owner)), timeToLive: "
            + "\(ConformanceValues.milliseconds(lifetime)) ms"
        note(instance, "acquireFetchLockAndRead(\(arguments))")
        let attempt = try await locks.instance(instance).acquireFetchLockAndRead(
            anyTransactionID: customer,
            in: environment,
            owner: owner,
            timeToLive: lifetime
        )
        answered(ConformanceValues.describe(attempt))
        let now = subject.now
        if let mismatch = model.acquire(
            slot,
            owner: owner,
            lifetime: lifetime,
            now: now,
            reentrant: readsWhenFetchLockTaken,
            acquired: attempt.acquired
        ) {
            throw failure(mismatch, actual: attempt.acquired ? "taken" : "not taken")
        }
        // Without the lock, a cache that does not read then may answer nothing.
        if attempt.acquired || readsWhenFetchLockTaken || attempt.answer != nil {
            try judgeAnswer(attempt.answer, slot)
        }
        if let generation = attempt.generation,
            let mismatch = model.readGeneration(slot, generation, step: history.count)
        {
            throw failure(mismatch, actual: ConformanceValues.describe(generation))
        }
    }

    private mutating func release(_ customer: String, _ environment: StoreEnvironment, instance: Int) async throws {
        guard let locks else { return }
        let slot = ContractModel.Slot(customer, environment)
        let holder = model.locks[slot]?.owner
        let owner = holder.flatMap { random.chance(50) ? $0 : nil } ?? random.pick(Self.owners)
        note(
            instance,
            "releaseFetchLock(anyTransactionID: \(quoted(customer)), in: \(environment), owner: \(quoted(owner)))"
        )
        try await locks.instance(instance).releaseFetchLock(anyTransactionID: customer, in: environment, owner: owner)
        model.release(slot, owner: owner)
    }

    // MARK: Invalidations

    private mutating func invalidate(
        _ what: ContractModel.Invalidation,
        _ call: String,
        _ instance: Int
    ) async throws {
        guard let invalidations else { return }
        // Whose answers it may have removed: read next, where a store that forgets too few shows it.
        let held = model.answers.keys.sorted()
        note(instance, call)
        let cache = invalidations.instance(instance)
        switch what {
        case .all: try await cache.invalidateAll()
        case .group(let group): try await cache.invalidate(groupID: group)
        case .customer(let customer):
            try await cache.invalidate(anyTransactionID: String(decoding: customer, as: UTF8.self))
        }
        model.invalidate(what, step: history.count)
        for _ in 0..<min(2, held.count) {
            let slot = random.pick(held)
            let customer = String(decoding: slot.customer, as: UTF8.self)
            try await readAnswer(customer, slot.environment, instance: subject.second == nil ? 0 : random.below(2))
        }
    }

    // MARK: Rate limits

    private mutating func rateKey() -> (GroupsEndpoint, StoreEnvironment) {
        (random.pick([.customerGroups, .groupMembers]), random.pick(StoreEnvironment.allCases))
    }

    private mutating func setRateLimit(instance: Int) async throws {
        guard let rateLimits else { return }
        let (endpoint, environment) = rateKey()
        let now = ConformanceValues.wholeMilliseconds(subject.now)
        // On the suite's clock, seconds away and never on a step of the clock; on the cache's own,
        // minutes away, so that none passes while the sequence runs.
        let offset: Int64 =
            subject.clock == nil
            ? Int64(random.pick([-30, -1, 1, 10, 60])) * 60_000 + Int64(random.below(1000))
            : Int64(random.below(44) - 3) * 1_000 + 5
        let instant = Date(timeIntervalSince1970: Double(now + offset) / 1000)
        note(instance, "setRateLimitedUntil(\(now + offset) ms, for: \(endpoint), in: \(environment))")
        try await rateLimits.instance(instance).setRateLimitedUntil(instant, for: endpoint, in: environment)
        model.setRateLimit(ContractModel.RateKey(endpoint: endpoint.name, environment: environment), instant)
    }

    private mutating func readRateLimit(instance: Int) async throws {
        guard let rateLimits else { return }
        let (endpoint, environment) = rateKey()
        note(instance, "rateLimitedUntil(\(endpoint), in: \(environment))")
        let instant = try await rateLimits.instance(instance).rateLimitedUntil(endpoint, in: environment)
        let text = instant.map { "\(ConformanceValues.wholeMilliseconds($0)) ms" } ?? "none"
        answered(text)
        let key = ContractModel.RateKey(endpoint: endpoint.name, environment: environment)
        if let mismatch = model.readRateLimit(key, instant, now: subject.now) { throw failure(mismatch, actual: text) }
    }

    // MARK: The budget

    private mutating func take(instance: Int, refresh: Bool) async throws {
        guard let budgets else { return }
        let index = random.below(buckets.count)
        let budget = buckets[index].budget
        let name =
            "\(budget.endpoint) in \(budget.environment) (\(budget.ratePerSecond) a second, burst \(Int(budget.burst)))"
        let cache = budgets.instance(instance)
        let start = timeline
        let token: FleetBudgetToken
        var maximumWait: Double?
        var reserve = 0.0
        if refresh {
            reserve = random.pick([0, 0.5, 1])
            note(instance, "takeBudgetToken(from: \(name), keeping: \(reserve))")
            token = try await cache.takeBudgetToken(from: budget, keeping: reserve)
        } else {
            let wait = random.pick([0, 300, 1_000, 5_000])
            maximumWait = Double(wait) / 1000
            note(instance, "takeBudgetToken(from: \(name), maximumWait: \(wait) ms)")
            token = try await cache.takeBudgetToken(from: budget, maximumWait: .milliseconds(wait))
        }
        let end = timeline
        answered(ConformanceValues.describe(token))
        if let mismatch = buckets[index].observe(
            token,
            maximumWait: maximumWait,
            reserve: reserve,
            window: (start, end),
            realTime: subject.clock == nil
        ) {
            throw failure(
                ContractModel.Mismatch(requirement: mismatch.requirement, expected: mismatch.expected),
                actual: ConformanceValues.describe(token)
            )
        }
    }
}
