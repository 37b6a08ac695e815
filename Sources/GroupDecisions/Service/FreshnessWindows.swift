import AppStoreGroups
import Foundation
import GroupPolicy

/// The windows the service reads an answer's age against, as its ``FreshnessPolicy`` sets them:
/// fresh, servable stale, kept, due a refresh ahead.
///
/// Converted to seconds once, at init: a hit compares dates with them, and `Duration` arithmetic
/// costs more than the rest of the check. The policy owns every window; this is its arithmetic in
/// seconds for the hot path, and asks the policy itself only past the earliest refresh point.
struct FreshnessWindows: Sendable {
    let policy: FreshnessPolicy
    /// ``FreshnessPolicy/timeToLive`` and ``FreshnessPolicy/negativeTimeToLive`` in seconds.
    let timeToLiveSeconds: Double
    let negativeTimeToLiveSeconds: Double
    /// The oldest an answer of groups is served (``FreshnessPolicy/lifetime(of:)``) in seconds, and
    /// the earliest age a hit asks for a refresh ahead, before the answer's share of
    /// ``FreshnessPolicy/refreshSpread`` (infinity when ``FreshnessPolicy/refreshAfter`` is `nil`).
    let maximumAgeSeconds: Double
    let refreshAheadSeconds: Double

    init(_ freshness: FreshnessPolicy) {
        self.policy = freshness
        self.timeToLiveSeconds = freshness.timeToLive.seconds
        self.negativeTimeToLiveSeconds = freshness.negativeTimeToLive.seconds
        self.maximumAgeSeconds = freshness.lifetime(of: .groups).seconds
        self.refreshAheadSeconds = freshness.refreshPoint(draw: 0)?.seconds ?? .infinity
    }

    /// The cached answer as a flight result when it is fresh; throws a fresh negative answer (a
    /// cache hit too); `nil` when it is too old.
    func fresh(
        _ answer: CachedGroupsAnswer,
        decoded: GetCustomerGroupsResponse?,
        now: Date
    ) throws(AppStoreGroupsError) -> GroupDecisionService.Loaded? {
        switch answer.kind {
        case .notFound:
            guard now < answer.fetchedAt.addingTimeInterval(negativeTimeToLiveSeconds) else { return nil }
            throw Self.notFound(since: answer.fetchedAt)
        case .groups:
            guard now < answer.fetchedAt.addingTimeInterval(timeToLiveSeconds),
                let decoded = decoded ?? Self.decode(answer)
            else { return nil }
            return GroupDecisionService.Loaded(answer: answer, decoded: decoded, source: .cache)
        }
    }

    /// The answer as a stale flight result when it holds groups and is younger than `seconds`.
    func staleAnswer(_ entry: LocalGroupsCache.Entry, now: Date, within seconds: Double) -> GroupDecisionService.Loaded?
    {
        guard entry.answer.kind == .groups, now < entry.answer.fetchedAt.addingTimeInterval(seconds),
            let decoded = entry.decoded ?? Self.decode(entry.answer)
        else { return nil }
        return GroupDecisionService.Loaded(answer: entry.answer, decoded: decoded, source: .stale)
    }

    /// Whether an answer of groups is past its own refresh point.
    ///
    /// The point is the policy's, moved by the answer's draw of the spread, so that answers fetched
    /// together come due apart. Before the earliest point (every hit in the first three quarters
    /// of the time to live, by default) it is one comparison.
    func refreshIsDue(_ answer: CachedGroupsAnswer, customerID: String, now: Date) -> Bool {
        let age = now.timeIntervalSince(answer.fetchedAt)
        guard answer.kind == .groups, age >= refreshAheadSeconds else { return false }
        let draw = FreshnessPolicy.draw(customerID: customerID, fetchedAt: answer.fetchedAt)
        guard let point = policy.refreshPoint(draw: draw) else { return false }
        return age >= point.seconds
    }

    /// How long an answer is kept: as long as the freshness policy lets it be served at all.
    func lifetime(of answer: CachedGroupsAnswer) -> Duration {
        policy.lifetime(of: answer.kind)
    }

    private static func decode(_ answer: CachedGroupsAnswer) -> GetCustomerGroupsResponse? {
        try? GetCustomerGroupsResponse(jsonBytes: answer.body)
    }

    private static func notFound(since fetchedAt: Date) -> AppStoreGroupsError {
        AppStoreGroupsError(
            code: .transactionIDNotFound,
            message: "the App Store knows no such transaction (remembered since \(fetchedAt))",
            httpStatus: 404,
            apiErrorCode: 4_040_010
        )
    }
}
