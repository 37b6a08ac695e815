import GroupPolicy

/// Evaluates single-group scenarios through the compiled tables: the same code as
/// `Policy.capabilities(for:in:)`, so invariants and diffs see exactly what requests see.
struct ScenarioEvaluator {
    let policy: CompiledPolicy
    /// The group's capabilities after the last ``evaluate(groupID:groupType:roles:context:)``.
    private(set) var capabilities: CapabilityBits = .small(0)

    init(policy: CompiledPolicy) {
        self.policy = policy
    }

    /// Computes one group's capabilities (granted minus denied) into ``capabilities``.
    mutating func evaluate(groupID: String, groupType: GroupType, roles: [RoleEntry], context: EvaluationContext) {
        let group = GroupEntry(groupID: groupID, groupType: groupType, roles: roles)
        // With a single group, the customer's capabilities are the group's.
        capabilities = policy.customerBits([group], context: context)
    }

    /// Whether the last evaluated group has the capability at `index` of the policy's catalog.
    func has(_ index: Int) -> Bool {
        capabilities.contains(index)
    }
}
