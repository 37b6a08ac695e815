public import AppStoreGroups
import Foundation
public import GroupPolicy

/// A decision, top to bottom: this process's copy, else one flight per customer (through the shared
/// cache and its fetch lock to the source), then the policy. Each step is one type's job:
/// `LocalCopies`, `SingleFlight`, `SharedFlight`, `Fetcher`, `AnswerKeeper`, and the
/// `ServingPermit` every flight carries.
extension GroupDecisionService {
    /// The customer's Decision under the policy serving now.
    ///
    /// - Parameters:
    ///   - anyTransactionID: Any of the customer's transaction ids (use the same one for a customer
    ///     everywhere, and for ``invalidate(anyTransactionID:)``): 1 to 128 characters of
    ///     `A-Z a-z 0-9 _ -`, checked before anything else is done.
    ///   - entitlements: The product ids your backend verified from the customer's transactions.
    ///   - environment: Where the transactions come from.
    /// - Returns: The Decision with where its groups came from, when they were fetched, and the
    ///   policy that made it.
    /// - Throws: `AppStoreGroupsError`: `AppStoreGroupsError.Code.invalidArgument` for a
    ///   malformed id (no budget spent); the fetch's own error when fetching failed and no answer
    ///   within the stale-if-error window was left (nothing granted);
    ///   `AppStoreGroupsError.Code.transactionIDNotFound` (also from the negative cache);
    ///   `AppStoreGroupsError.Code.rateLimitExceeded` without an HTTP status when the budget or
    ///   a `Retry-After` instant is further away than ``RateLimitGate/Configuration/maximumRateLimitWait``.
    public func decision(
        anyTransactionID: String,
        entitlements: Set<String> = [],
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> ServedDecision {
        let loaded: LoadedGroups
        do {
            loaded = try await groups(anyTransactionID, in: environment)
        } catch {
            recordRefusal(anyTransactionID, in: environment, error: error)
            throw error
        }
        return serve(loaded, anyTransactionID: anyTransactionID, entitlements: entitlements, environment: environment)
    }

    /// The customer's groups: this process's copy, or a flight's answer.
    private func groups(
        _ customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> LoadedGroups {
        if let hit = try await confirmedCopy(customerID, in: environment) { return hit }
        observer.cacheMiss(GroupDecisionEvent.CacheMiss(environment: environment))
        return try await missed(customerID, in: environment)
    }

    /// The customer's groups through one flight per customer: the shared cache or the source.
    ///
    /// The id is checked first: a malformed one spends no budget and takes no lock.
    private func missed(
        _ customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> LoadedGroups {
        try RequestValidation.checkIdentifier(customerID, name: "transaction id")
        let key = CustomerKey(environment: environment, customerID: customerID)
        let sharedFlight = self.sharedFlight
        let flight = { @Sendable (permit: ServingPermit) async throws(AppStoreGroupsError) -> FlightOutcome in
            .answered(try await sharedFlight.load(customerID: customerID, environment: environment, permit: permit))
        }
        let begun = timeSource.now()
        let joined = await flights.runReportingPermit(key, flight)
        var loaded: LoadedGroups
        switch joined.result {
        case .failure(let error):
            // Apple's not-found is about the customer, and may predate an invalidation (a purchase's
            // notification) that returned before this caller began: judged as an answer is.
            guard error.code == .transactionIDNotFound,
                !joined.permit.answers(callerBegunAt: begun, countCheckInterval: countCheckInterval)
            else { throw error }
            loaded = try await answer(key, joiningFlightsSince: begun, flight)
        case .success(.fetchedNothing):
            // Joined a refresh ahead that fetched nothing: a flight of this caller's own.
            loaded = try await answer(key, joiningFlightsSince: nil, after: joined.permit, flight)
        case .success(.answered(let answer)):
            loaded = answer
            // A stale answer too: the flight's fallback may be the answer an invalidation removed.
            if !joined.permit.answers(callerBegunAt: begun, countCheckInterval: countCheckInterval) {
                // The flight's answer is kept here stamped with the count its first read saw: served
                // to this caller only as a copy the count confirms now, otherwise from a flight of its own.
                if let confirmed = try await confirmedCopy(customerID, in: environment) {
                    loaded = confirmed
                } else {
                    loaded = try await self.answer(key, joiningFlightsSince: begun, flight)
                }
            }
        }
        if loaded.source == .cache { copies.refreshIfDue(loaded.answer, key: key, now: timeSource.now()) }
        return loaded
    }

    /// The answer of a flight begun at or after `earliest` (`nil`: whenever) other than `nothing`
    /// (a refresh ahead that fetched nothing), joined once more when the one joined fetched nothing.
    private func answer(
        _ key: CustomerKey,
        joiningFlightsSince earliest: Date?,
        after nothing: ServingPermit? = nil,
        _ flight: @escaping @Sendable (ServingPermit) async throws(AppStoreGroupsError) -> FlightOutcome
    ) async throws(AppStoreGroupsError) -> LoadedGroups {
        var excluded = nothing
        while true {
            let joined = await flights.runReportingPermit(
                key,
                joiningFlightsSince: earliest,
                notJoining: excluded,
                flight
            )
            switch try joined.result.get() {
            case .answered(let loaded): return loaded
            case .fetchedNothing: excluded = joined.permit
            }
        }
    }

    /// The interval within which a flight's answer may be handed to a caller who began after the
    /// flight, unconfirmed: with a shared cache that counts invalidations, the check interval.
    private var countCheckInterval: Double? {
        guard let invalidations = context.invalidations, !invalidations.isUnsupported else { return nil }
        return configuration.sharedCache.invalidationCheckInterval.seconds
    }

    /// This process's copy for the customer if the invalidation count confirms it now (read once more
    /// when the last reading is too old), or `nil`; throws a fresh negative answer.
    private func confirmedCopy(
        _ customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> LoadedGroups? {
        switch try copies.cached(customerID, in: environment) {
        case .hit(let hit): hit
        case .miss: nil
        case .unconfirmed: try await copies.confirmedHit(customerID, in: environment)
        }
    }
}
