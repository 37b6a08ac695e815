import AppStoreGroups
import Foundation
import GroupPolicy

/// A hit in this process's cache: served without suspending, or, with a shared cache, once the
/// invalidation count confirms the copy.
extension GroupDecisionService {
    /// What this process's cache holds for a customer.
    enum LocalLookup {
        /// A fresh answer, confirmed by the invalidation count when there is a shared cache.
        case hit(Loaded)
        /// Nothing fresh.
        case miss
        /// A copy whose stamp the invalidation count read last does not confirm (see
        /// ``InvalidationWatch``).
        case unconfirmed
    }

    /// This process's fresh answer for the customer; throws a fresh negative answer.
    ///
    /// An answer due a refresh ahead asks for one. With a shared cache, a copy is a hit only while
    /// the invalidation count confirms it: recently read, unless `recently` is `false` (the cache
    /// cannot be read, and copies are served as before the count existed).
    func cached(
        _ customerID: String,
        in environment: StoreEnvironment,
        recently: Bool = true
    ) throws(AppStoreGroupsError) -> LocalLookup {
        let now = timeSource.now()
        let key = CustomerKey(environment: environment, customerID: customerID)
        guard let entry = local.entry(key, now: now) else {
            return .miss
        }
        if let invalidations, !invalidations.confirms(entry.invalidationCount, now: now, recently: recently) {
            return .unconfirmed
        }
        let loaded: Loaded?
        do {
            loaded = try fresh(entry.answer, decoded: entry.decoded, now: now, environment: environment)
        } catch {
            // A fresh negative answer is a hit too.
            hit(entry.answer, in: environment, fromSharedCache: false)
            throw error
        }
        guard let loaded else { return .miss }
        hit(entry.answer, in: environment, fromSharedCache: false)
        refreshIfDue(entry.answer, key: key, now: now)
        return .hit(loaded)
    }

    /// A copy the invalidation count read last did not confirm, served once a reading (this
    /// process's one at a time) confirms it; `nil` for a miss.
    ///
    /// When the count cannot be read the shared cache's answer is read instead, and when that
    /// cannot be read either, the copy is served as before the count existed (within the local
    /// time to live, if its stamp is the count read last): no invalidation completes while the
    /// shared cache fails.
    func confirmedHit(
        _ customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> Loaded? {
        guard let shared, let invalidations else { return nil }
        switch await invalidations.read(shared) {
        case .read:
            // The same rule, with the reading joined (or a later one): a reading that began too
            // long ago, or a count that moved (the copy went with it), is a miss.
            if case .hit(let loaded) = try cached(customerID, in: environment) { return loaded }
            return nil
        case .failed:
            let key = CustomerKey(environment: environment, customerID: customerID)
            let stamp = invalidations.stamp
            if let answer = await shared.read(
                customerID: customerID,
                { cache throws(AppStoreGroupsError) in
                    try await cache.answer(anyTransactionID: customerID, in: environment)
                }
            ) {
                guard let answer else { return nil }
                return try adopt(answer, key: key, stamp: stamp)
            }
            if case .hit(let loaded) = try cached(customerID, in: environment, recently: false) { return loaded }
            return nil
        }
    }

    func hit(_ answer: CachedGroupsAnswer, in environment: StoreEnvironment, fromSharedCache: Bool) {
        observer.cacheHit(
            GroupDecisionEvent.CacheHit(
                environment: environment,
                fetchedAt: answer.fetchedAt,
                fromSharedCache: fromSharedCache
            )
        )
    }
}
