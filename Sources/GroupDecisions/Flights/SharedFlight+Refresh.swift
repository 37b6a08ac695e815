import GroupPolicy

/// Refreshes ahead: one customer's answer fetched again before it expires, as that customer's
/// flight (see ``GroupDecisionService/run()``).
extension SharedFlight {
    /// A refresh ahead, one for the fleet: the shared fetch lock taken without waiting, or none; a
    /// refresh that sends nothing or fails leaves the cached answer as it was, and fetched nothing.
    func refresh(_ key: CustomerKey, permit: ServingPermit) async -> FlightOutcome {
        guard let shared = context.shared, context.invalidations != nil else {
            let entry = context.local.entry(key, now: context.timeSource.now())
            return await refresh(entry?.answer, decoded: entry?.decoded, key: key, permit: permit, read: FlightRead())
        }
        // What it keeps here is stamped with the invalidation count read before it began.
        let stamp = context.invalidations?.stamp
        // The lock, the answer and the generation in one call: another process may have refreshed
        // the customer since this one read its answer.
        let locked = await underFetchLock(key, shared: shared) {
            attempt,
            _ -> (FlightOutcome, releasedLock: Bool) in
            let read = FlightRead(stamp: stamp, generation: attempt.generation)
            let outcome = await refresh(attempt.answer, key: key, permit: permit, read: read)
            return (outcome, releasedLock: false)
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

    /// The refresh of `answer`: nothing for an answer that has gone (invalidated, expired, evicted)
    /// or is negative, as the next caller fetches; the answer itself when it is fresh again (a
    /// caller fetched it anew while the refresh waited), kept here when it came from the shared
    /// cache; otherwise a fetch.
    private func refresh(
        _ answer: CachedGroupsAnswer?,
        decoded: GetCustomerGroupsResponse? = nil,
        key: CustomerKey,
        permit: ServingPermit,
        read: FlightRead
    ) async -> FlightOutcome {
        guard let answer, answer.kind == .groups else { return .fetchedNothing }
        let now = context.timeSource.now()
        if context.verdict(answer, customerID: key.customerID, now: now) == .fresh,
            let loaded = LoadedGroups(answer, decoded: decoded, source: .cache)
        {
            if context.invalidations != nil {
                let stamp = read.stamp
                keeper.keepLocally(answer, decoded: loaded.decoded, key: key, now: now, permit: permit, stamp: stamp)
            }
            return .answered(loaded)
        }
        return await fetcher.refresh(key, permit: permit, read: read)
    }
}
