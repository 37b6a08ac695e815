import AppStoreGroups
import Foundation
import GroupPolicy

/// This process's copies of answers: a hit served without suspending, or, with a shared cache,
/// once the invalidation count confirms the copy (see ``InvalidationWatch``).
struct LocalCopies: Sendable {
    let context: ServingContext
    let sharedFlight: SharedFlight
    let refreshes: RefreshQueue

    /// What this process's cache holds for a customer.
    enum LocalLookup {
        /// A fresh answer, confirmed by the invalidation count when there is a shared cache.
        case hit(LoadedGroups)
        /// Nothing fresh.
        case miss
        /// A copy whose stamp the invalidation count read last does not confirm (see
        /// ``InvalidationWatch``).
        case unconfirmed
    }

    /// This process's fresh answer for the customer; throws a fresh negative answer.
    ///
    /// An answer due a refresh ahead asks for one. With a shared cache, a copy is a hit only while
    /// the invalidation count confirms it: read less than the check interval ago.
    func cached(
        _ customerID: String,
        in environment: StoreEnvironment
    ) throws(AppStoreGroupsError) -> LocalLookup {
        let now = context.timeSource.now()
        let key = CustomerKey(environment: environment, customerID: customerID)
        guard let entry = context.local.entry(key, now: now) else {
            return .miss
        }
        if let invalidations = context.invalidations, !invalidations.confirms(entry.invalidationCount, now: now) {
            return .unconfirmed
        }
        let verdict = context.verdict(entry.answer, customerID: customerID, now: now)
        guard
            let loaded = try context.servedAsItIs(
                entry.answer,
                decoded: entry.decoded,
                verdict: verdict,
                in: environment,
                fromSharedCache: false
            )
        else { return .miss }
        if verdict == .refreshDue { refreshes.offer(key) }
        return .hit(loaded)
    }

    /// A copy the invalidation count read last did not confirm, served once a reading confirms it;
    /// `nil` for a miss.
    ///
    /// When the count cannot be read, the shared cache's answer (always correct)
    /// is served if fresh, else nothing: the caller goes to a flight.
    func confirmedHit(
        _ customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> LoadedGroups? {
        guard let shared = context.shared, let invalidations = context.invalidations,
            let answers = shared.caches.answers, let counts = shared.caches.invalidations
        else { return nil }
        if await invalidations.read(shared, counts) {
            // The same rule, with the reading joined (or a later one): a reading that began too
            // long ago, or a count that moved (the copy went with it), is a miss.
            if case .hit(let loaded) = try cached(customerID, in: environment) { return loaded }
            return nil
        }
        let key = CustomerKey(environment: environment, customerID: customerID)
        // Read outside any flight: a permit of this caller's own, which no invalidation overtakes.
        let permit = ServingPermit(began: context.timeSource.now())
        let stamp = invalidations.stamp
        let read = await shared.read(customerID: customerID) { () throws(AppStoreGroupsError) in
            try await answers.answer(anyTransactionID: customerID, in: environment)
        }
        guard let answer = read ?? nil else { return nil }
        return try sharedFlight.adopt(answer, key: key, permit: permit, stamp: stamp)
    }

    /// Asks for a refresh ahead of a fresh answer when it is old enough; one comparison otherwise.
    func refreshIfDue(_ answer: CachedGroupsAnswer, key: CustomerKey, now: Date) {
        guard context.verdict(answer, customerID: key.customerID, now: now) == .refreshDue else { return }
        refreshes.offer(key)
    }
}
