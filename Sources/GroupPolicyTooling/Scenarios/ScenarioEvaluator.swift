import GroupPolicy

/// Evaluates single-group scenarios through the compiled tables: the same code as
/// `Policy.capabilities(for:in:)`, so invariants and diffs see exactly what requests see.
///
/// The one-group response is kept and changed in place from scenario to scenario, so evaluating
/// millions of them allocates no response each.
struct ScenarioEvaluator {
    let policy: Policy
    /// The group's capabilities after the last evaluation.
    private(set) var capabilities: CapabilityBits = .small(0)
    private var groups = [GroupEntry(groupID: "", groupType: .organization, roles: [])]

    init(policy: Policy) {
        self.policy = policy
    }

    /// Computes the capabilities (granted minus denied) of a group holding the candidates at
    /// `indices` into ``capabilities``, reusing the kept group's storage.
    mutating func evaluate(
        groupID: String,
        groupType: GroupType,
        entries indices: [Int],
        of candidates: [ScenarioSpace.Candidate],
        context: EvaluationContext
    ) {
        groups[0].groupID = groupID
        groups[0].groupType = groupType
        groups[0].roles.removeAll(keepingCapacity: true)
        for index in indices { groups[0].roles.append(candidates[index].entry) }
        capabilities = policy.customerBits(groups, context: context)
    }

    /// Whether the last evaluated group has the capability at `index` of the policy's catalog.
    func has(_ index: Int) -> Bool {
        capabilities.contains(index)
    }
}
