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
    /// No provenance, no workspaces, and no allocation for policies of up to 64 capabilities. Always
    /// equal to `evaluate(response, in: context).capabilities`.
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

extension CompiledPolicy {
    /// The union over groups of (granted - denied), merged by group id, from the tables.
    func customerBits(_ groups: [GroupEntry], context: EvaluationContext) -> CapabilityBits {
        let words = catalog.wordCount
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 3 * words + documents.count) { buffer in
            guard let base = buffer.baseAddress else { return .small(0) }
            let customer = base
            let grant = base + words
            let deny = base + 2 * words
            let layerMasks = base + 3 * words
            customer.initialize(repeating: 0, count: words)
            for (index, document) in documents.enumerated() {
                layerMasks[index] = document.activeLayers(in: context)
            }
            let skipPlaceholder = context.environment == .production

            func evaluate(_ groupIndex: Int, duplicates: some Sequence<Int>) {
                let group = groups[groupIndex]
                if skipPlaceholder && group.groupID == GetCustomerGroupsResponse.sandboxPlaceholderGroupID { return }
                grant.initialize(repeating: 0, count: 2 * words)
                for (index, document) in documents.enumerated() {
                    document.accumulate(
                        groupID: group.groupID,
                        groupType: group.groupType,
                        roles: group.roles,
                        context: context,
                        layerMask: layerMasks[index],
                        grant: grant,
                        deny: deny
                    )
                    // A repeated group id's entries join the first occurrence (whose type wins).
                    for duplicate in duplicates {
                        document.accumulate(
                            groupID: group.groupID,
                            groupType: group.groupType,
                            roles: groups[duplicate].roles,
                            context: context,
                            layerMask: layerMasks[index],
                            grant: grant,
                            deny: deny
                        )
                    }
                }
                for word in 0..<words { customer[word] |= grant[word] & ~deny[word] }
            }

            if groups.count <= 32 {
                // Few groups: find duplicates by comparing ids, with no allocation.
                outer: for index in groups.indices {
                    let groupID = groups[index].groupID
                    for earlier in 0..<index where groups[earlier].groupID == groupID { continue outer }
                    let later = (index + 1)..<groups.count
                    evaluate(index, duplicates: later.lazy.filter { groups[$0].groupID == groupID })
                }
            } else {
                for members in mergePlan(groups) {
                    evaluate(members[0], duplicates: members.dropFirst())
                }
            }
            return CapabilityBits(words: UnsafeBufferPointer(start: customer, count: words))
        }
    }
}

/// The response's groups with duplicate ids merged: each element lists the indices of one group
/// id's entries, in order of first occurrence.
func mergePlan(_ groups: [GroupEntry]) -> [[Int]] {
    var plan: [[Int]] = []
    var positionByID: [String: Int] = [:]
    for (index, group) in groups.enumerated() {
        if let position = positionByID[group.groupID] {
            plan[position].append(index)
        } else {
            positionByID[group.groupID] = plan.count
            plan.append([index])
        }
    }
    return plan
}
