import AppStoreGroups
import Foundation
import GroupPolicy

/// A customer's groups as a flight delivers them.
struct LoadedGroups: Sendable {
    var answer: CachedGroupsAnswer
    var decoded: GetCustomerGroupsResponse
    var source: ServedDecision.Source
    /// Why a stale answer is served, and how old it was then.
    var staleReason: ServedDecision.StaleReason? = nil
    var staleAge: Duration? = nil
}

extension LoadedGroups {
    /// `answer` (groups) as a flight result from `source`, decoded unless `decoded` is given;
    /// `nil` when its bytes do not decode.
    init?(_ answer: CachedGroupsAnswer, decoded: GetCustomerGroupsResponse?, source: ServedDecision.Source) {
        guard let decoded = decoded ?? (try? GetCustomerGroupsResponse(jsonBytes: answer.body)) else { return nil }
        self.init(answer: answer, decoded: decoded, source: source)
    }

    /// What a negative answer kept since `fetchedAt` throws.
    static func notFound(since fetchedAt: Date) -> AppStoreGroupsError {
        AppStoreGroupsError(
            code: .transactionIDNotFound,
            message: "the App Store knows no such transaction (remembered since \(fetchedAt))",
            httpStatus: 404,
            apiErrorCode: 4_040_010
        )
    }
}

/// What a flight came to.
enum FlightOutcome: Sendable {
    /// The customer's groups, or a negative answer thrown.
    case answered(LoadedGroups)
    /// A refresh ahead that fetched nothing (another process refreshes, the budget spared no
    /// token, the answer had gone, the fetch failed): not an answer for a caller who joined it,
    /// who starts a flight of their own.
    case fetchedNothing
}
