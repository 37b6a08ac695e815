import Foundation
import GroupPolicy
import GroupPolicyBasics

/// Whether an answer may still be served, and kept, after the invalidations so far: the one
/// question every path of a decision asks about invalidation (see the article "Serving decisions
/// at fleet scale", section "One permit per flight: the invalidation mechanism").
final class ServingPermit: Sendable {
    let began: Date

    private struct State {
        /// Overtaken by an invalidation of the customer or of everyone: whatever the answer holds.
        var entirely = false
        /// Overtaken by invalidations of these groups: an answer holding one of them.
        var groupIDs: [String] = []
    }

    private let state = Locked(State())

    init(began: Date) {
        self.began = began
    }

    /// Whether `answer` may still be served and kept: no invalidation of this process overtook the
    /// flight for it (any of the customer or of everyone; a group's when the answer holds the
    /// group, or when its groups are not known).
    func clears(_ answer: CachedGroupsAnswer, decoded: GetCustomerGroupsResponse?) -> Bool {
        state.withLock { state in
            if state.entirely { return false }
            if state.groupIDs.isEmpty || answer.kind == .notFound { return true }
            guard let decoded else { return false }
            // Byte for byte, as the shared cache's index compares group ids.
            return !decoded.groups.contains { group in
                state.groupIDs.contains { Array($0.utf8) == Array(group.groupID.utf8) }
            }
        }
    }

    /// Whether the flight's answer may be served to a caller who began at `callerBegunAt` without
    /// confirming it again: an invalidation through another process that returned before the
    /// caller began was counted at least `countCheckInterval` earlier (`nil`: nothing counts them).
    func answers(callerBegunAt: Date, countCheckInterval: Double?) -> Bool {
        guard let countCheckInterval else { return true }
        return callerBegunAt.timeIntervalSince(began) < countCheckInterval
    }

    /// Marks the flight overtaken by an invalidation of its customer or of everyone.
    func invalidate() { state.withLock { $0.entirely = true } }

    /// Marks the flight overtaken for an answer holding the group.
    func invalidate(groupID: String) { state.withLock { $0.groupIDs.append(groupID) } }
}
