import AppStoreGroups
import Foundation
import GroupPolicy

/// The windows the service reads an answer's age against, as the service's configuration sets
/// them: fresh, servable stale, kept, due a refresh ahead.
///
/// Converted to seconds once, at init: a hit compares dates with them, and `Duration` arithmetic
/// costs more than the rest of the check.
struct FreshnessWindows: Sendable {
    let configuration: GroupDecisionService.Configuration
    /// ``GroupDecisionService/Configuration/timeToLive`` and
    /// ``GroupDecisionService/Configuration/negativeTimeToLive`` in seconds.
    let timeToLiveSeconds: Double
    let negativeTimeToLiveSeconds: Double
    /// ``GroupDecisionService/Configuration/maximumAge`` in seconds, and the age at which a hit asks
    /// for a refresh ahead (infinity when ``GroupDecisionService/Configuration/refreshAhead`` is `nil`).
    let maximumAgeSeconds: Double
    let refreshAheadSeconds: Double

    init(_ configuration: GroupDecisionService.Configuration) {
        self.configuration = configuration
        self.timeToLiveSeconds = configuration.timeToLive.seconds
        self.negativeTimeToLiveSeconds = configuration.negativeTimeToLive.seconds
        self.maximumAgeSeconds = configuration.maximumAge.seconds
        self.refreshAheadSeconds = configuration.refreshAhead.map { $0 * configuration.timeToLive.seconds } ?? .infinity
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

    /// Whether a fresh answer is old enough to ask for a refresh ahead; one comparison otherwise.
    func refreshIsDue(_ answer: CachedGroupsAnswer, now: Date) -> Bool {
        answer.kind == .groups && now.timeIntervalSince(answer.fetchedAt) >= refreshAheadSeconds
    }

    /// How long an answer is kept: the maximum age for groups (it may be served stale until then),
    /// the negative time to live for a negative one.
    func lifetime(of answer: CachedGroupsAnswer) -> Duration {
        switch answer.kind {
        case .groups: configuration.maximumAge
        case .notFound: configuration.negativeTimeToLive
        }
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
