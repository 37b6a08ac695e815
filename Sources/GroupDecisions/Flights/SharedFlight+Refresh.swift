import AppStoreGroups
import Foundation
import GroupPolicy

/// Refreshes ahead: one customer's answer fetched again before it expires, as that customer's
/// flight (see ``GroupDecisionService/run()``).
extension SharedFlight {
    /// A refresh ahead, one for the fleet: the shared fetch lock taken without waiting, or none.
    ///
    /// It takes a token only if the budget spares one beyond its reserve, and keeps the new answer
    /// under the invalidation generation read before asking Apple. Never throws: a refresh that
    /// sends nothing or fails leaves the cached answer as it was, and fetched nothing.
    func refresh(_ key: CustomerKey, permit: ServingPermit) async -> FlightOutcome {
        guard let shared = context.shared else {
            // An answer that has gone (invalidated, evicted) is not refreshed: the next caller fetches.
            let now = context.timeSource.now()
            guard let entry = context.local.entry(key, now: now), entry.answer.kind == .groups else {
                return .fetchedNothing
            }
            // Nor one that is no longer due: a caller fetched it anew while the refresh waited.
            if context.verdict(entry.answer, customerID: key.customerID, now: now) == .fresh,
                let loaded = LoadedGroups(entry.answer, decoded: entry.decoded, source: .cache)
            {
                return .answered(loaded)
            }
            return await fetcher.refresh(key, permit: permit, read: FlightRead())
        }
        // What it keeps here is stamped with the invalidation count read before it began.
        let stamp = context.invalidations?.stamp
        // The lock, the answer and the generation in one call: another process may have refreshed
        // the customer since this one read its answer.
        let locked = await underFetchLock(key, shared: shared) {
            attempt,
            _ -> (FlightOutcome, releasedLock: Bool) in
            // The answer has gone (invalidated, expired) or is negative: the next caller fetches.
            guard let answer = attempt.answer, answer.kind == .groups else {
                return (.fetchedNothing, releasedLock: false)
            }
            let now = context.timeSource.now()
            if context.verdict(answer, customerID: key.customerID, now: now) == .fresh,
                let loaded = LoadedGroups(answer, decoded: nil, source: .cache)
            {
                keeper.keepLocally(answer, decoded: loaded.decoded, key: key, now: now, permit: permit, stamp: stamp)
                return (.answered(loaded), releasedLock: false)
            }
            let read = FlightRead(stamp: stamp, generation: attempt.generation)
            return (await fetcher.refresh(key, permit: permit, read: read), releasedLock: false)
        }
        switch locked {
        case .unavailable:
            // The shared cache is unavailable: refreshed for this process alone, kept here only.
            return await fetcher.refresh(key, permit: permit, read: FlightRead(stamp: stamp))
        case .heldElsewhere:
            // Another process fetches or refreshes the customer: its answer will do.
            return .fetchedNothing
        case .held(let outcome):
            return outcome
        }
    }
}
