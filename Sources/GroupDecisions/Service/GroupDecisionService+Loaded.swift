import AppStoreGroups
import GroupPolicy

/// What a flight delivers.
extension GroupDecisionService {
    /// A customer's groups as a flight delivers them.
    struct Loaded: Sendable {
        var answer: CachedGroupsAnswer
        var decoded: GetCustomerGroupsResponse
        var source: ServedDecision.Source
        /// Why a stale answer is served, and how old it was then.
        var staleReason: ServedDecision.StaleReason? = nil
        var staleAge: Duration? = nil
    }

    /// What a flight came to.
    enum FlightOutcome: Sendable {
        /// The customer's groups, or a negative answer thrown.
        case answered(Loaded)
        /// A refresh ahead that fetched nothing (another process refreshes, the budget spared no
        /// token, the answer had gone, the fetch failed): not an answer for a caller who joined it,
        /// who starts a flight of their own.
        case fetchedNothing
    }
}
