extension Policy {
    /// Evaluates a response into a full ``Decision``: capabilities overall and per group,
    /// workspaces, grants and denials with provenance, and notes.
    ///
    /// - Parameters:
    ///   - response: Apple's Get Customer Groups answer for the customer.
    ///   - context: The environment and the entitlements the app derived from transactions.
    /// - Returns: The decision, with provenance.
    public func evaluate(
        _ response: GetCustomerGroupsResponse,
        in context: EvaluationContext = EvaluationContext()
    )
        -> Decision
    {
        compiled.decide(response, context: context)
    }

    /// The customer's capabilities only: the per-request fast path.
    ///
    /// No provenance, no workspaces, and no allocation for policies of up to 64 capabilities and
    /// responses of up to 32 groups. Always equal to `evaluate(response, in: context).capabilities`.
    ///
    /// - Parameters:
    ///   - response: Apple's Get Customer Groups answer for the customer.
    ///   - context: The environment and the entitlements the app derived from transactions.
    /// - Returns: The union over the groups of each group's capabilities.
    public func capabilities(
        for response: GetCustomerGroupsResponse,
        in context: EvaluationContext = EvaluationContext()
    ) -> CapabilitySet {
        CapabilitySet(catalog: compiled.catalog, bits: compiled.customerBits(response.groups, context: context))
    }
}

extension Policy {
    /// The capabilities (granted minus denied) of `groups` as a bit set over ``capabilityNames``:
    /// the evaluation the scenario tools run millions of times, with no ``Decision`` built.
    package func customerBits(_ groups: [GroupEntry], context: EvaluationContext) -> CapabilityBits {
        compiled.customerBits(groups, context: context)
    }
}

extension CompiledPolicy {
    /// The union over groups of (granted - denied), merged by group id, from the tables.
    ///
    /// Allocates nothing for responses of up to 32 groups and policies of up to 64 capabilities:
    /// the merge plan and the working bit sets live in temporary (stack) buffers.
    func customerBits(_ groups: [GroupEntry], context: EvaluationContext) -> CapabilityBits {
        let words = catalog.wordCount
        let count = groups.count
        let environment = context.environment
        return groups.withUnsafeBufferPointer { groups in
            withUnsafeTemporaryAllocation(of: Int32.self, capacity: 2 * count) { plan in
                let merge = GroupMerge(
                    groups,
                    first: UnsafeMutableBufferPointer(rebasing: plan[0..<count]),
                    next: UnsafeMutableBufferPointer(rebasing: plan[count...])
                )
                // first[i] becomes the group whose bits group i adds to, or -1 when it gets nothing.
                let first = merge.first
                for index in 0..<count {
                    let target = Int(first[index])
                    if target == index {
                        if GroupMerge.ignores(groups[index].groupID, in: environment) { first[index] = -1 }
                    } else if first[target] < 0 {
                        first[index] = -1
                    }
                }
                let targets = UnsafeBufferPointer(first)
                return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: words + 2 * words * count) { buffer in
                    // The capacity is exact: the customer's words, then (grant, deny) per group.
                    guard let customer = buffer.baseAddress else { return .small(0) }
                    buffer.initialize(repeating: 0)
                    let bits = customer + words
                    #if DEBUG
                    // What each document's accumulation reads: every group and role entry.
                    for group in groups { countWork(documents.count * (1 + group.roles.count)) }
                    #endif
                    for document in documents {
                        document.accumulate(groups: groups, first: targets, context: context, bits: bits)
                    }
                    for index in 0..<count where targets[index] == Int32(index) {
                        let grant = bits + index * 2 * words
                        for word in 0..<words { customer[word] |= grant[word] & ~grant[words + word] }
                    }
                    return CapabilityBits(words: UnsafeBufferPointer(start: customer, count: words))
                }
            }
        }
    }
}
