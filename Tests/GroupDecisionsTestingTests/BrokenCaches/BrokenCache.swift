import AppStoreGroups
import Foundation
import GroupDecisions
import GroupDecisionsTesting
import GroupPolicy
import Synchronization

/// Answers, the fetch lock and invalidations of an `InMemoryGroupsCache`, broken by one of their
/// ``BrokenFault``s (or by none, when the fault is another concern's).
///
/// Everything else is the in-memory cache's behaviour: the combined calls are its atomic ones unless
/// the fault is in them. ``secondInstance()`` opens another instance over the same storage; the
/// state a fault keeps is the storage's, except where the fault is that an instance keeps its own.
final class BrokenCache: SharedAnswerCache, SharedFetchLock, SharedInvalidations, Sendable {
    let fault: BrokenFault?
    let inner: InMemoryGroupsCache
    private let storage: Storage
    /// The invalidations made through this instance (``BrokenFault/countPerInstance``).
    private let ownInvalidations = Mutex<UInt64>(0)

    /// What every instance over one storage shares, beyond the in-memory cache.
    private final class Storage: Sendable {
        struct State {
            /// Every customer and environment written, so that a fault can put their answers back.
            var written: Set<Slot> = []
            /// Every owner that asked for each lock.
            var owners: [Slot: Set<String>] = [:]
            /// The answer written last, for any customer.
            var lastWritten: CachedGroupsAnswer?
            /// The count read first (``BrokenFault/frozenCount``).
            var frozenCount: UInt64?
            /// What the count read back lost at the restart (``BrokenFault/countRestartsFromZero``).
            var countLost: UInt64 = 0
            var invalidations = 0
        }

        let state = Mutex(State())
    }

    /// A customer (byte for byte, as the in-memory cache keeps ids) in an environment.
    struct Slot: Hashable, Sendable {
        /// The id's bytes: ids equal as strings but not byte for byte are two customers.
        let bytes: [UInt8]
        let environment: StoreEnvironment
        var customerID: String { String(decoding: bytes, as: UTF8.self) }

        init(customerID: String, environment: StoreEnvironment) {
            (bytes, self.environment) = (Array(customerID.utf8), environment)
        }
    }

    /// The concerns of `inner`, broken by `fault` when it is one of theirs.
    init(_ fault: BrokenFault?, inner: InMemoryGroupsCache) {
        self.fault = fault?.concern == .answers ? fault : nil
        self.inner = inner
        storage = Storage()
    }

    private init(sharing other: BrokenCache) {
        fault = other.fault
        inner = other.inner
        storage = other.storage
    }

    /// Another instance over the same storage, as a second process would open it.
    func secondInstance() -> BrokenCache { BrokenCache(sharing: self) }

    /// The key a customer id is kept under: the id as the fault folds it.
    private func key(_ customerID: String) -> String {
        switch fault {
        case .caseInsensitiveKeys: customerID.lowercased()
        case .normalizationFoldingKeys: customerID.precomposedStringWithCompatibilityMapping
        default: customerID
        }
    }

    /// The environment whose slot an answer is read from.
    private func readEnvironment(_ environment: StoreEnvironment) -> StoreEnvironment {
        fault == .sharesEnvironments ? .sandbox : environment
    }

    /// Writes as the in-memory cache does (releasing `owner`'s lock when given), or whatever the
    /// generation when `unconditionally`, and remembers a kept answer.
    private func keep(
        _ write: AnswerWrite,
        releasing owner: String? = nil,
        unconditionally: Bool = false
    ) async throws(AppStoreGroupsError) -> Bool {
        var kept = true
        if unconditionally {
            let (customer, environment) = (write.customerID, write.environment)
            try await inner.setAnswer(
                write.answer,
                anyTransactionID: customer,
                in: environment,
                timeToLive: write.timeToLive
            )
        } else if let owner {
            kept = try await inner.setAnswer(write, releasingFetchLock: owner)
        } else {
            kept = try await inner.setAnswer(write)
        }
        guard kept else { return false }
        storage.state.withLock {
            $0.written.insert(Slot(customerID: write.customerID, environment: write.environment))
            $0.lastWritten = write.answer
        }
        return true
    }

    /// The write this cache makes of `write`: its key, a lifetime, and generations as the fault has it.
    private func adjusted(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> AnswerWrite {
        var adjusted = write
        adjusted.customerID = key(write.customerID)
        if fault == .answersNeverExpire { adjusted.timeToLive = Self.forever }
        if fault == .writeIgnoresGroups {
            let current = try await inner.invalidationGeneration(
                anyTransactionID: adjusted.customerID,
                in: adjusted.environment
            )
            adjusted.generation.groups = current.groups
        }
        return adjusted
    }

    /// A hundred years: longer than any test.
    private static let forever = Duration.seconds(100 * 365 * 86_400)

    /// Runs `invalidation`, then puts back the answers of `keep` it removed, and counts it.
    private func keepingAnswers(
        of keep: (Slot) -> Bool,
        _ invalidation: () async throws(AppStoreGroupsError) -> Void
    ) async throws(AppStoreGroupsError) {
        var saved: [(Slot, CachedGroupsAnswer)] = []
        for slot in storage.state.withLock({ Array($0.written) }) where keep(slot) {
            if let answer = try await inner.answer(anyTransactionID: slot.customerID, in: slot.environment) {
                saved.append((slot, answer))
            }
        }
        try await invalidation()
        for (slot, answer) in saved {
            try await inner.setAnswer(
                answer,
                anyTransactionID: slot.customerID,
                in: slot.environment,
                timeToLive: .seconds(3600)
            )
        }
        ownInvalidations.withLock { $0 += 1 }
        let restarts = storage.state.withLock { state in
            state.invalidations += 1
            return state.invalidations == 3
        }
        guard fault == .countRestartsFromZero, restarts, let lost = try await inner.invalidationCount() else { return }
        // The store lost its count and starts again from 0.
        storage.state.withLock { $0.countLost = lost }
    }

    /// The count as this cache reports it, of the in-memory cache's `count`.
    private func reported(_ count: UInt64?) -> UInt64? {
        guard let count else { return nil }
        switch fault {
        case .frozenCount:
            return storage.state.withLock { state in
                if state.frozenCount == nil { state.frozenCount = count }
                return state.frozenCount
            }
        case .countPerInstance:
            return ownInvalidations.withLock { $0 }
        case .countRestartsFromZero:
            return count - storage.state.withLock { $0.countLost }
        default:
            return count
        }
    }

    // MARK: SharedAnswerCache

    func answer(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> CachedGroupsAnswer? {
        try await inner.answer(anyTransactionID: key(customerID), in: readEnvironment(environment))
    }

    func invalidationGeneration(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> InvalidationGeneration {
        try await inner.invalidationGeneration(anyTransactionID: key(customerID), in: environment)
    }

    func setAnswer(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> Bool {
        let ignoresGeneration = fault == .ignoresGenerations || fault == .lockFreeWriteIgnoresGeneration
        return try await keep(adjusted(write), unconditionally: ignoresGeneration)
    }

    // MARK: SharedFetchLock

    func releaseFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String
    ) async throws(AppStoreGroupsError) {
        try await release(key(customerID), in: environment, owner: owner)
    }

    /// Releases the lock of the customer kept under `key`, as the fault has it.
    private func release(
        _ key: String,
        in environment: StoreEnvironment,
        owner: String
    ) async throws(AppStoreGroupsError) {
        guard fault == .releasesAnyOwner else {
            return try await inner.releaseFetchLock(anyTransactionID: key, in: environment, owner: owner)
        }
        let slot = Slot(customerID: key, environment: environment)
        for holder in storage.state.withLock({ $0.owners[slot] ?? [] }) {
            try await inner.releaseFetchLock(anyTransactionID: key, in: environment, owner: holder)
        }
    }

    func acquireFetchLockAndRead(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> FetchLockAttempt {
        _ = storage.state.withLock {
            $0.owners[Slot(customerID: key(customerID), environment: environment), default: []].insert(owner)
        }
        var attempt = try await inner.acquireFetchLockAndRead(
            anyTransactionID: key(customerID),
            in: environment,
            owner: owner,
            timeToLive: fault == .lockNeverExpires ? Self.forever : timeToLive
        )
        if fault == .sharesEnvironments {
            attempt.answer = try await inner.answer(anyTransactionID: key(customerID), in: .sandbox)
        }
        return attempt
    }

    func setAnswer(_ write: AnswerWrite, releasingFetchLock owner: String) async throws(AppStoreGroupsError) -> Bool {
        let write = try await adjusted(write)
        switch fault {
        case .ignoresGenerations:
            try await release(write.customerID, in: write.environment, owner: owner)
            return try await keep(write, unconditionally: true)
        case .refusedWriteKeepsLock, .releasesAnyOwner:
            let kept = try await keep(write)
            if kept || fault == .releasesAnyOwner {
                try await release(write.customerID, in: write.environment, owner: owner)
            }
            return kept
        default:
            return try await keep(write, releasing: owner)
        }
    }

    // MARK: SharedInvalidations

    func invalidate(anyTransactionID customerID: String) async throws(AppStoreGroupsError) {
        let customerID = key(customerID)
        let keepsProduction = fault == .customerKeepsProduction
        let keep: (Slot) -> Bool = {
            keepsProduction && $0.customerID == customerID && $0.environment == .production
        }
        try await keepingAnswers(of: keep) { () throws(AppStoreGroupsError) in
            try await inner.invalidate(anyTransactionID: customerID)
        }
    }

    func invalidate(groupID: String) async throws(AppStoreGroupsError) {
        let fault = fault
        let keep: (Slot) -> Bool = {
            fault == .groupKeepsAnswers || (fault == .groupIndexMissesProduction && $0.environment == .production)
        }
        try await keepingAnswers(of: keep) { () throws(AppStoreGroupsError) in
            try await inner.invalidate(groupID: groupID)
        }
    }

    func invalidateAll() async throws(AppStoreGroupsError) {
        let keeps = fault == .everyoneKeepsAnswers
        let keep: (Slot) -> Bool = { _ in keeps }
        try await keepingAnswers(of: keep) { () throws(AppStoreGroupsError) in try await inner.invalidateAll() }
    }

    func invalidationCount() async throws(AppStoreGroupsError) -> UInt64? {
        reported(try await inner.invalidationCount())
    }

    func answerAndInvalidationCount(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> (answer: CachedGroupsAnswer?, invalidationCount: UInt64?) {
        var read = try await inner.answerAndInvalidationCount(
            anyTransactionID: key(customerID),
            in: readEnvironment(environment)
        )
        if fault == .answerOfLastWrite, read.answer == nil { read.answer = storage.state.withLock { $0.lastWritten } }
        return (read.answer, fault == .combinedReadDropsCount ? nil : reported(read.invalidationCount))
    }
}
