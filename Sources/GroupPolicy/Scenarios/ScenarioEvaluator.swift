/// Evaluates single-group scenarios through the compiled tables (the same path as
/// ``Policy/capabilities(for:in:)``), reusing its buffers from one scenario to the next.
struct ScenarioEvaluator {
    let policy: CompiledPolicy
    private var grant: [UInt64]
    private var deny: [UInt64]
    /// The group's capabilities after the last ``evaluate(groupID:groupType:roles:context:layerMasks:)``.
    private(set) var capabilities: [UInt64]

    init(policy: CompiledPolicy) {
        self.policy = policy
        let words = policy.catalog.wordCount
        grant = [UInt64](repeating: 0, count: words)
        deny = [UInt64](repeating: 0, count: words)
        capabilities = [UInt64](repeating: 0, count: words)
    }

    /// Each document's active layers in `context`, to pass to every evaluation in that context.
    func layerMasks(in context: EvaluationContext) -> [UInt64] {
        policy.documents.map { $0.activeLayers(in: context) }
    }

    /// Computes one group's capabilities (granted minus denied) into ``capabilities``.
    mutating func evaluate(
        groupID: String,
        groupType: GroupType,
        roles: [RoleEntry],
        context: EvaluationContext,
        layerMasks: [UInt64]
    ) {
        let words = capabilities.count
        for word in 0..<words {
            grant[word] = 0
            deny[word] = 0
        }
        // Production ignores Apple's sandbox placeholder group.
        if !(context.environment == .production && groupID == GetCustomerGroupsResponse.sandboxPlaceholderGroupID) {
            grant.withUnsafeMutableBufferPointer { grant in
                deny.withUnsafeMutableBufferPointer { deny in
                    guard let grant = grant.baseAddress, let deny = deny.baseAddress else { return }
                    for (index, document) in policy.documents.enumerated() {
                        document.accumulate(
                            groupID: groupID,
                            groupType: groupType,
                            roles: roles,
                            context: context,
                            layerMask: layerMasks[index],
                            grant: grant,
                            deny: deny
                        )
                    }
                }
            }
        }
        for word in 0..<words { capabilities[word] = grant[word] & ~deny[word] }
    }

    /// Whether the last evaluated group has the capability at `index` of the policy's catalog.
    func has(_ index: Int) -> Bool {
        capabilities[index >> 6] & (1 << UInt64(index & 63)) != 0
    }
}
