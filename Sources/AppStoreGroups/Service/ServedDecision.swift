public import GroupPolicy

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A ``GroupDecisionService`` answer: the Decision, and how fresh the groups it was made from are.
///
/// The Decision carries the same facts (`groupsSource`, `groupsFetchedAt`, `policyRevision`), so
/// its JSON says them too.
public struct ServedDecision: Sendable {
    /// Where the customer's groups came from: `live`, `cache` or `stale`.
    public typealias Source = Decision.GroupsSource

    /// The customer's capabilities, groups and workspaces under the policy serving at the time.
    public let decision: Decision
    /// Where the groups came from.
    public let source: Source
    /// When Apple's answer was received.
    public let fetchedAt: Date
    /// The customer's groups the Decision was made from.
    public let groups: GetCustomerGroupsResponse
    /// The policy (the store's snapshot) that made the Decision: explain a capability with it and
    /// ``groups`` to get the same answer, whatever reloads happened since.
    public let policy: Policy

    /// Creates an answer.
    ///
    /// - Parameters:
    ///   - decision: The Decision.
    ///   - source: Where the groups came from.
    ///   - fetchedAt: When Apple's answer was received.
    ///   - groups: The groups the Decision was made from.
    ///   - policy: The policy that made it.
    public init(
        decision: Decision,
        source: Source,
        fetchedAt: Date,
        groups: GetCustomerGroupsResponse,
        policy: Policy
    ) {
        self.decision = decision
        self.source = source
        self.fetchedAt = fetchedAt
        self.groups = groups
        self.policy = policy
    }
}
