import GroupPolicyBasics

/// Why one capability is or is not granted, group by group: the answer to a support desk's
/// "why can't this administrator see the seat controls?".
///
/// Made by ``Policy/explain(_:for:in:group:)``. For each group of the response (or the one group
/// asked about) it gives the outcome and its reasons: the grants that gave the capability, the deny
/// rules that removed it, or, when nothing granted it, every grant rule naming it with each of its
/// conditions that the group and context do not meet (its near misses, nearest first).
///
/// Explaining is a separate path from ``Policy/evaluate(_:in:)`` and
/// ``Policy/capabilities(for:in:)``: it follows the rules' text one rule at a time and allocates
/// freely, and its outcomes always agree with the decision's.
public struct Explanation: Sendable, Hashable {
    /// The capability explained.
    public var capability: Capability
    /// Whether any grant rule of the policy (or set) names the capability.
    ///
    /// `false` means no group can ever get it: every group's outcome is
    /// ``Explanation/Group/Outcome-swift.enum/notGranted`` (or `ignored`) with no near misses.
    public var hasGrantRules: Bool
    /// One explanation per group, in response order (groups repeated in the response merged), or
    /// only the group asked about.
    public var groups: [Explanation.Group]

    /// Creates an explanation.
    public init(capability: Capability, hasGrantRules: Bool, groups: [Explanation.Group]) {
        self.capability = capability
        self.hasGrantRules = hasGrantRules
        self.groups = groups
    }

    /// The explanation of the group `groupID`, or `nil` when it is not among ``groups``.
    ///
    /// Group ids compare by their bytes, as evaluation merges groups: a precomposed "é" and "e"
    /// followed by a combining accent are two groups.
    public func group(_ groupID: String) -> Explanation.Group? {
        groups.first { $0.groupID.isExactly(groupID) }
    }
}
