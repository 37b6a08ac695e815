import AppStoreGroups
import Foundation
import GroupPolicy

/// Asks the source for a customer's groups through the rate-limit gate and keeps the answer (see
/// ``AnswerKeeper``); serves an older answer marked stale when the budget or the fetch fails
/// within the windows that allow it.
struct Fetcher: Sendable {
    let context: ServingContext
    let source: any GroupsSource
    let rateLimitGate: RateLimitGate
    let keeper: AnswerKeeper

    private var timeSource: TimeSource { context.timeSource }

    /// What a fetch came to, and whether the write that kept its answer released the fetch lock.
    struct Fetched: Sendable {
        var result: Result<LoadedGroups, AppStoreGroupsError>
        var releasedLock = false
    }

    /// Asks the source through the rate-limit gate and keeps the answer, releasing the fetch lock
    /// taken as `lock` (if any) with the shared write when it can; the result says whether it did.
    ///
    /// With an answer past its time to live but within the maximum age, the request is a refresh
    /// (see ``RateLimitGate/admitRefresh(_:)``): that answer is served stale (reason `budget`) when
    /// the budget spares no token, or Apple answers 429. When the fetch fails, one within the
    /// stale-if-error window is served stale (reason `error`); otherwise the call fails closed.
    func fetch(
        _ key: CustomerKey,
        fallback: LocalGroupsCache.Entry?,
        permit: ServingPermit,
        read: FlightRead,
        lock: String? = nil
    ) async -> Fetched {
        // Judged against the hard cap when the fetch begins (whether it is a refresh) and again when
        // it is served: the budget's wait or Apple's answer may take the answer past the cap.
        let stale = { servable(fallback, when: .budgetShort) }
        let isRefresh = stale() != nil
        if isRefresh {
            do throws(AppStoreGroupsError) {
                try await rateLimitGate.admitRefresh(Self.endpoint(key))
            } catch {
                guard let stale = stale() else { return Fetched(result: .failure(error)) }
                return Fetched(
                    result: .success(served(stale, reason: .budget, error: error, environment: key.environment))
                )
            }
        }
        var fetched = await fetchAndKeep(key, permit: permit, read: read, admitted: isRefresh, lock: lock)
        guard case .failure(let error) = fetched.result else { return fetched }
        if isRefresh, error.code == .rateLimitExceeded, error.httpStatus == 429, let stale = stale() {
            fetched.result = .success(served(stale, reason: .budget, error: error, environment: key.environment))
            return fetched
        }
        if error.code != .invalidArgument, error.code != .invalidTransactionID,
            error.code != .transactionIDNotFound,
            let loaded = servable(fallback, when: .fetchFailed)
        {
            fetched.result = .success(served(loaded, reason: .error, error: error, environment: key.environment))
        }
        return fetched
    }

    /// Sends the request (through the gate, or as admitted already) and keeps the answer; a
    /// `TransactionIdNotFoundError` is kept as a negative answer and its error returned.
    private func fetchAndKeep(
        _ key: CustomerKey,
        permit: ServingPermit,
        read: FlightRead,
        admitted: Bool,
        lock: String? = nil
    ) async -> Fetched {
        let request = { () async throws(AppStoreGroupsError) -> ([UInt8], GetCustomerGroupsResponse) in
            try await self.source.customerGroupsAnswer(anyTransactionID: key.customerID, environment: key.environment)
        }
        let result: Result<([UInt8], GetCustomerGroupsResponse), AppStoreGroupsError>
        do {
            result = .success(
                admitted
                    ? try await rateLimitGate.sendAdmitted(Self.endpoint(key), request)
                    : try await rateLimitGate.send(.customerGroups, in: key.environment, request)
            )
        } catch {
            result = .failure(error)
        }
        let now = Self.wholeMilliseconds(timeSource.now())
        let answer: CachedGroupsAnswer
        switch result {
        case .success(let (body, _)): answer = CachedGroupsAnswer(kind: .groups, body: body, fetchedAt: now)
        case .failure(let error) where error.code == .transactionIDNotFound:
            answer = CachedGroupsAnswer(kind: .notFound, body: [], fetchedAt: now)
        case .failure(let error): return Fetched(result: .failure(error))
        }
        let response = try? result.get().1
        let released = await keeper.keep(
            answer,
            decoded: response,
            key: key,
            now: now,
            permit: permit,
            read: read,
            lock: lock
        )
        return Fetched(
            result: result.map { LoadedGroups(answer: answer, decoded: $0.1, source: .live) },
            releasedLock: released
        )
    }

    /// Get Customer Groups in the customer's environment, as the gate keys its budgets.
    private static func endpoint(_ key: CustomerKey) -> EndpointKey {
        EndpointKey(environment: key.environment, endpoint: .customerGroups)
    }

    /// A refresh ahead's request, if the budget spares a token, and its answer kept; nothing
    /// fetched when the budget spares none or the fetch fails.
    func refresh(
        _ key: CustomerKey,
        permit: ServingPermit,
        read: FlightRead
    ) async -> FlightOutcome {
        guard (try? await rateLimitGate.admitRefresh(Self.endpoint(key))) != nil,
            case .success(let loaded) = await fetchAndKeep(key, permit: permit, read: read, admitted: true).result
        else { return .fetchedNothing }
        return .answered(loaded)
    }

    /// The older answer as a stale flight result when the freshness policy lets it be served in
    /// `circumstance`: it holds groups, and has not expired (fresh too: a copy the invalidation count
    /// did not confirm in time to be served as a hit).
    private func servable(
        _ fallback: LocalGroupsCache.Entry?,
        when circumstance: FreshnessPolicy.Circumstance
    ) -> LoadedGroups? {
        guard let fallback, fallback.answer.kind == .groups else { return nil }
        let answer = fallback.answer
        let verdict = context.freshness.verdict(
            .groups,
            fetchedAt: answer.fetchedAt,
            now: timeSource.now(),
            circumstance: circumstance
        )
        guard verdict != .expired else { return nil }
        return LoadedGroups(answer, decoded: fallback.decoded, source: .stale)
    }

    /// A stale answer served: its reason and age set, the observer told.
    private func served(
        _ loaded: LoadedGroups,
        reason: ServedDecision.StaleReason,
        error: AppStoreGroupsError,
        environment: StoreEnvironment
    ) -> LoadedGroups {
        var loaded = loaded
        let age = Duration.roundedUp(from: loaded.answer.fetchedAt, to: timeSource.now())
        loaded.staleReason = reason
        loaded.staleAge = age
        context.observer.staleServed(
            GroupDecisionEvent.StaleServed(
                environment: environment,
                fetchedAt: loaded.answer.fetchedAt,
                error: error,
                reason: reason,
                age: age
            )
        )
        return loaded
    }

    /// The instant cut to whole milliseconds, the resolution a shared cache keeps, so a fetch time
    /// reads the same from every process.
    private static func wholeMilliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }
}
