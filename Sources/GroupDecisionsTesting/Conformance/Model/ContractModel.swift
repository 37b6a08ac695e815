import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy

/// The shared-cache contract as a model: what a store holds after a sequence of operations, and
/// which answers it may give next.
///
/// Ids are compared byte for byte. Where the contract leaves a store a choice, the model accepts
/// either answer and keeps what the answer proves: a group's invalidation may also forget an
/// answer listed under the group by an earlier write or holding a group canonically equivalent to
/// it (a store that forgets too many costs a fetch, never a wrong answer), an answer written by the
/// plain `setAnswer` may or may not be listed under its groups, and the single lock call by the
/// lock's own owner may or may not renew it.
struct ContractModel {
    struct Slot: Hashable, Comparable {
        var customer: [UInt8]
        var environment: StoreEnvironment

        init(_ customerID: String, _ environment: StoreEnvironment) {
            customer = Array(customerID.utf8)
            self.environment = environment
        }

        /// By the customer's bytes, then the environment: an order that does not depend on hashing,
        /// which differs from run to run, so a sequence drawn from it replays.
        static func < (left: Slot, right: Slot) -> Bool {
            guard left.customer == right.customer else {
                return left.customer.lexicographicallyPrecedes(right.customer)
            }
            return left.environment.rawValue < right.environment.rawValue
        }
    }

    struct Kept {
        var answer: CachedGroupsAnswer
        var groups: [String]
        var expires: Date
        /// Written by the conditional write, which lists it under its groups.
        var indexed: Bool
        /// Why it may be gone although nothing had to remove it, or `nil`.
        var mayBeGone: String?
    }

    enum Invalidation {
        case customer([UInt8])
        case group(String)
        case all
    }

    struct Lock {
        var owner: String
        /// The lock is held before `earliest` and free from `latest` on; between the two, the
        /// model does not know.
        var earliest: Date
        var latest: Date
    }

    struct RateKey: Hashable {
        var endpoint: String
        var environment: StoreEnvironment
    }

    /// A requirement an answer did not meet, and what the model expected.
    struct Mismatch {
        var requirement: String
        var expected: String
    }

    static let answers =
        "an answer read is the one last kept for that customer and environment, byte for byte: none once it "
        + "expired or an invalidation removed it, never another customer's or environment's"
    static let writes =
        "a write is kept exactly when no invalidation of its customer, of everyone or of one of its groups came "
        + "after its generation was read"
    static let generations =
        "the generation read after an invalidation of the customer, of everyone or of any group differs from "
        + "every one read for them before it"
    static let lockHeld = "a lock has one holder until its owner releases it or it expires"
    static let lockFree =
        "a lock nobody holds (released, expired or never taken) is taken, and acquireFetchLockAndRead reports it "
        + "taken to the owner that holds it"
    static let rateLimits =
        "the latest Retry-After instant is kept, never read back earlier than set, until it passes; then none"
    static let countNew = "every invalidation changes the count to a value never read before"
    static let countSame = "without an invalidation, every reading from either instance gives the same count"
    static let countKept = "a store keeps a count or none: every reading answers a count, or every reading nil"

    private(set) var answers: [Slot: Kept] = [:]
    private var listedGroups: [Slot: Set<[UInt8]>] = [:]
    private var generationReads: [Slot: [(generation: InvalidationGeneration, step: Int)]] = [:]
    private(set) var invalidations: [(step: Int, what: Invalidation)] = []
    private(set) var locks: [Slot: Lock] = [:]
    private var rateLimits: [RateKey: Date] = [:]
    private var countKept: Bool?
    private var count: UInt64?
    private var countsRead: Set<UInt64> = []

    // MARK: Answers

    /// Judges `answer`, read for `slot` at `now`, and keeps what it proves.
    mutating func read(_ slot: Slot, _ answer: CachedGroupsAnswer?, now: Date) -> Mismatch? {
        if let kept = answers[slot], now >= kept.expires { answers[slot] = nil }
        guard let kept = answers[slot] else {
            guard answer == nil else { return Mismatch(requirement: Self.answers, expected: "no answer") }
            return nil
        }
        if answer == kept.answer {
            answers[slot]?.mayBeGone = nil
            return nil
        }
        if answer == nil, kept.mayBeGone != nil {
            answers[slot] = nil
            return nil
        }
        let alternative = kept.mayBeGone.map { ", or none (\($0))" } ?? ""
        return Mismatch(requirement: Self.answers, expected: ConformanceValues.describe(kept.answer) + alternative)
    }

    /// Keeps `answer` for `slot` until `expires`; `indexed` for the conditional write.
    mutating func keep(_ slot: Slot, _ answer: CachedGroupsAnswer, groups: [String], expires: Date, indexed: Bool) {
        answers[slot] = Kept(answer: answer, groups: groups, expires: expires, indexed: indexed, mayBeGone: nil)
        if indexed { listedGroups[slot, default: []].formUnion(groups.map { Array($0.utf8) }) }
    }

    // MARK: Generations and writes

    /// Judges a generation read for `slot` at `step`, and remembers it for the writes.
    mutating func readGeneration(_ slot: Slot, _ generation: InvalidationGeneration, step: Int) -> Mismatch? {
        let reads = generationReads[slot, default: []]
        for (earlier, readAt) in reads where earlier == generation {
            if let moved = invalidations.first(where: { $0.step > readAt && concerns($0.what, slot, groups: nil) }) {
                return Mismatch(
                    requirement: Self.generations,
                    expected: "a generation other than \(ConformanceValues.describe(earlier)), read at step "
                        + "\(readAt) before the invalidation of step \(moved.step)"
                )
            }
        }
        generationReads[slot, default: []].append((generation, step))
        return nil
    }

    /// The generations read for `slot`, oldest first, with the step each was read at.
    func generations(_ slot: Slot) -> [(generation: InvalidationGeneration, step: Int)] {
        generationReads[slot] ?? []
    }

    /// Whether an invalidation concerns a write for `slot` holding `groups` (any group when `nil`,
    /// as for the generation itself).
    private func concerns(_ invalidation: Invalidation, _ slot: Slot, groups: [String]?) -> Bool {
        switch invalidation {
        case .all: true
        case .customer(let customer): customer == slot.customer
        case .group(let group): groups.map { $0.contains { Array($0.utf8) == Array(group.utf8) } } ?? true
        }
    }

    /// Whether a write for `slot` holding `groups`, at the generation read at `step`, must be kept
    /// (`true`), refused (`false`), or may be either (`nil`: only a group canonically equivalent to
    /// one of its groups was invalidated since).
    func mustKeep(_ slot: Slot, groups: [String], generationReadAt step: Int) -> Bool? {
        let since = invalidations.filter { $0.step > step }
        if since.contains(where: { concerns($0.what, slot, groups: groups) }) { return false }
        let lookalike = since.contains { invalidation in
            guard case .group(let group) = invalidation.what else { return false }
            return groups.contains { $0 == group }
        }
        return lookalike ? nil : true
    }

    // MARK: Invalidations

    /// Applies an invalidation made at `step`.
    mutating func invalidate(_ what: Invalidation, step: Int) {
        invalidations.append((step, what))
        count = nil
        switch what {
        case .all:
            answers.removeAll()
        case .customer(let customer):
            for slot in answers.keys where slot.customer == customer { answers[slot] = nil }
        case .group(let group):
            let bytes = Array(group.utf8)
            for (slot, kept) in answers {
                let holds = kept.groups.contains { Array($0.utf8) == bytes }
                if holds && kept.indexed {
                    answers[slot] = nil
                } else if holds {
                    answers[slot]?.mayBeGone = "written by the plain setAnswer, which may list it under its groups"
                } else if kept.groups.contains(where: { $0 == group }) {
                    answers[slot]?.mayBeGone = "it holds a group canonically equivalent to the one invalidated"
                } else if listedGroups[slot]?.contains(bytes) == true {
                    answers[slot]?.mayBeGone = "an earlier write listed the customer under the group invalidated"
                }
            }
        }
    }

    // MARK: Locks

    /// Judges the answer to a lock call by `owner` at `now` (`reentrant`: through a native
    /// `acquireFetchLockAndRead`, which takes the lock its owner holds), and keeps what it proves.
    mutating func acquire(
        _ slot: Slot,
        owner: String,
        lifetime: Duration,
        now: Date,
        reentrant: Bool,
        acquired: Bool
    ) -> Mismatch? {
        let expires = now.addingTimeInterval(ConformanceValues.seconds(lifetime))
        let justAfter = now.addingTimeInterval(0.000_001)
        guard let lock = locks[slot], now < lock.latest else {
            guard acquired else { return Mismatch(requirement: Self.lockFree, expected: "taken") }
            locks[slot] = Lock(owner: owner, earliest: expires, latest: expires)
            return nil
        }
        let held = now < lock.earliest
        if lock.owner == owner {
            if acquired {
                let earliest = held ? min(lock.earliest, expires) : justAfter
                locks[slot] = Lock(owner: owner, earliest: earliest, latest: max(lock.latest, expires))
                return nil
            }
            // Held by the owner, or expired: a native acquireFetchLockAndRead takes it either way.
            guard !reentrant else { return Mismatch(requirement: Self.lockFree, expected: "taken") }
            if !held { locks[slot]?.earliest = justAfter }
            return nil
        }
        if acquired {
            guard !held else {
                return Mismatch(requirement: Self.lockHeld, expected: "not taken (held by \(lock.owner))")
            }
            locks[slot] = Lock(owner: owner, earliest: expires, latest: expires)
        } else if !held {
            locks[slot]?.earliest = justAfter
        }
        return nil
    }

    /// Releases `slot`'s lock when `owner` holds it.
    mutating func release(_ slot: Slot, owner: String) {
        if locks[slot]?.owner == owner { locks[slot] = nil }
    }

    // MARK: Rate limits

    mutating func setRateLimit(_ key: RateKey, _ instant: Date) {
        rateLimits[key] = max(rateLimits[key] ?? instant, instant)
    }

    /// Judges the instant read for `key` at `now`.
    func readRateLimit(_ key: RateKey, _ instant: Date?, now: Date) -> Mismatch? {
        let describe: (Date) -> String = { "\(ConformanceValues.wholeMilliseconds($0)) ms" }
        guard let latest = rateLimits[key], latest > now else {
            return instant == nil ? nil : Mismatch(requirement: Self.rateLimits, expected: "none")
        }
        guard let instant, instant >= latest, instant < latest.addingTimeInterval(1) else {
            return Mismatch(requirement: Self.rateLimits, expected: describe(latest))
        }
        return nil
    }

    // MARK: The invalidation count

    /// Judges a count read.
    mutating func readCount(_ read: UInt64?) -> Mismatch? {
        if let countKept, countKept != (read != nil) {
            return Mismatch(requirement: Self.countKept, expected: countKept ? "a count" : "nil")
        }
        countKept = read != nil
        guard let read else { return nil }
        if let count {
            return read == count ? nil : Mismatch(requirement: Self.countSame, expected: "\(count)")
        }
        if !invalidations.isEmpty, countsRead.contains(read) {
            let earlier = countsRead.sorted().map(String.init).joined(separator: ", ")
            return Mismatch(requirement: Self.countNew, expected: "a count other than \(earlier)")
        }
        count = read
        countsRead.insert(read)
        return nil
    }
}
