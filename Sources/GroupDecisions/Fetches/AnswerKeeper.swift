import AppStoreGroups
import Foundation
import GroupPolicy

/// Keeps answers: in the shared cache under the generation the flight read (a conditional write),
/// then in this process's cache stamped with the invalidation count the flight read (both handed
/// in as a ``FlightRead``), each only while the flight's ``ServingPermit`` clears the answer.
struct AnswerKeeper: Sendable {
    let context: ServingContext

    /// Keeps an answer in this process's cache, stamped with the invalidation count read before
    /// the read or fetch that produced it began, unless the permit no longer clears it.
    func keepLocally(
        _ answer: CachedGroupsAnswer,
        decoded: GetCustomerGroupsResponse?,
        key: CustomerKey,
        now: Date,
        permit: ServingPermit,
        stamp: UInt64?
    ) {
        let lifetime = context.freshness.lifetime(of: answer.kind)
        var left = answer.fetchedAt.addingTimeInterval(lifetime.seconds).timeIntervalSince(now)
        // With a shared cache, this process re-reads it often enough that another process's
        // invalidation reaches it within the bound.
        if context.invalidations != nil { left = min(left, context.localCopyTimeToLive.seconds) }
        guard left > 0, permit.clears(answer, decoded: decoded) else { return }
        let expires = now.addingTimeInterval((left * 1000).rounded(.down) / 1000)
        context.local.set(
            LocalGroupsCache.Entry(answer: answer, decoded: decoded, invalidationCount: stamp),
            for: key,
            expires: expires
        )
        // Set, then looked at again: an invalidation between the two has either removed the answer
        // itself or is seen here.
        if !permit.clears(answer, decoded: decoded) { context.local.remove(key) }
    }

    /// Keeps a fetched answer in the shared cache (only if no invalidation came since `read`'s
    /// generation: a refused one is kept nowhere, and this process's older answer goes too), then
    /// here; returns whether that write released the fetch lock taken as `lock`.
    func keep(
        _ answer: CachedGroupsAnswer,
        decoded: GetCustomerGroupsResponse?,
        key: CustomerKey,
        now: Date,
        permit: ServingPermit,
        read: FlightRead,
        lock: String? = nil
    ) async -> Bool {
        let life = context.freshness.lifetime(of: answer.kind)
        var releasedLock = false
        if let shared = context.shared, let answers = shared.caches.answers, let counts = shared.caches.invalidations,
            let generation = read.generation, life > .zero, permit.clears(answer, decoded: decoded)
        {
            let kept = await shared.read(customerID: key.customerID) { () throws(AppStoreGroupsError) -> Bool in
                let write = AnswerWrite(
                    answer,
                    anyTransactionID: key.customerID,
                    in: key.environment,
                    timeToLive: life,
                    groupIDs: decoded?.groups.map(\.groupID) ?? [],
                    ifGeneration: generation
                )
                let kept: Bool
                if let lock, let fetchLock = shared.caches.fetchLock {
                    kept = try await fetchLock.setAnswer(write, releasingFetchLock: lock)
                    releasedLock = true
                } else {
                    kept = try await answers.setAnswer(write)
                }
                // As below: this process's invalidation ran before the answer was written, or
                // removes it after.
                if kept, !permit.clears(answer, decoded: decoded) {
                    try await counts.invalidate(anyTransactionID: key.customerID)
                }
                return kept
            }
            // Refused: it predates an invalidation. A cache that failed (`nil`) keeps nothing either,
            // and this process keeps the answer as without a shared cache.
            if kept == false {
                context.local.remove(key)
                return releasedLock
            }
        }
        keepLocally(answer, decoded: decoded, key: key, now: now, permit: permit, stamp: read.stamp)
        return releasedLock
    }
}
