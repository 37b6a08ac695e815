#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What a customer's groups let the app present, for one response and context, with the reasons.
///
/// A decision is about presentation only: it never says what content the customer is entitled to
/// (that comes from transactions, and reaches capabilities only through `requires.entitlements`).
/// Every grant and denial is scoped to the group it matched in; the customer's capabilities are
/// the union over all groups.
public struct Decision: Sendable {
    /// Every capability the customer has in at least one group, sorted.
    public let capabilities: CapabilitySet
    /// One entry per group of the response, in response order (duplicates merged), including groups
    /// that give nothing.
    public let groups: [GroupDecision]
    /// The shared workspaces the customer belongs to, in response order, then definition order.
    public let workspaces: [WorkspaceMembership]
    /// For each capability that survived in a group, each rule that granted it there (and through
    /// which role entry), ordered by group, capability, rule, role entry.
    public let grants: [Grant]
    /// For each capability a deny rule removed from a group where it would otherwise have been
    /// granted, each such deny rule, ordered by group, capability, rule.
    public let denials: [Denial]
    /// Remarks about the input: the sandbox placeholder ignored in Production, a group repeated with
    /// conflicting types.
    public let notes: [String]
    /// Where the customer's groups came from, when a cache stood between Apple and this decision
    /// (set by a decision service); `nil` otherwise.
    public package(set) var groupsSource: Decision.GroupsSource?
    /// When Apple sent the customer's groups, when known (set by a decision service).
    public package(set) var groupsFetchedAt: Date?
    /// The revision of the policy set that made this decision (``Policy/revision``), when known
    /// (set by a decision service).
    public package(set) var policyRevision: String?

    /// Whether the customer has `capability` in any group.
    public func allows(_ capability: Capability) -> Bool {
        capabilities.contains(capability.name)
    }

    /// Whether the customer has `capability` in the group `groupID`.
    public func allows(_ capability: Capability, inGroup groupID: String) -> Bool {
        capabilities(inGroup: groupID)?.contains(capability.name) ?? false
    }

    /// The capabilities one group gives, or `nil` when the response has no such group.
    public func capabilities(inGroup groupID: String) -> CapabilitySet? {
        groups.first { $0.groupID == groupID }?.capabilities
    }

    /// The customer's memberships in one kind of workspace (one per matching group).
    public func memberships(in workspace: Workspace) -> [WorkspaceMembership] {
        workspaces.filter { $0.workspace == workspace }
    }

    /// The grants of one capability, across groups.
    public func grants(of capability: Capability) -> [Grant] {
        grants.filter { $0.capability == capability.name }
    }
}
