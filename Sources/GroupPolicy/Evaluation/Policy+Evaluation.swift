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

extension CompiledPolicy {
    /// The union over groups of (granted - denied), merged by group id, from the tables.
    ///
    /// Allocates nothing for responses of up to 32 groups and policies of up to 64 capabilities:
    /// the working bit sets, merge indices and id hashes live in temporary (stack) buffers.
    package func customerBits(_ groups: [GroupEntry], context: EvaluationContext) -> CapabilityBits {
        let words = catalog.wordCount
        let count = groups.count
        let skipPlaceholder = context.environment == .production
        return groups.withUnsafeBufferPointer { groups in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { first in
                // first[i]: the index of the first group with group i's id, or -1 when it gets nothing.
                if count <= 32 {
                    // Few groups: compare hashes of the ids (then the ids), without allocating.
                    withUnsafeTemporaryAllocation(of: UInt64.self, capacity: count) { hashes in
                        for index in 0..<count {
                            let hash = StringTable.hash(of: groups[index].groupID)
                            hashes[index] = hash
                            first[index] = index
                            for earlier in 0..<index
                            where hashes[earlier] == hash && groups[earlier].groupID == groups[index].groupID {
                                first[index] = first[earlier]
                                break
                            }
                            if skipPlaceholder && first[index] == index && hash == Self.placeholderHash
                                && groups[index].groupID == GetCustomerGroupsResponse.sandboxPlaceholderGroupID
                            {
                                first[index] = -1
                            }
                        }
                    }
                } else {
                    let plan = MergePlan(groups)
                    for index in 0..<count {
                        let target = plan.first[index]
                        let ignored =
                            skipPlaceholder
                            && groups[target].groupID == GetCustomerGroupsResponse.sandboxPlaceholderGroupID
                        first[index] = ignored ? -1 : target
                    }
                }
                let first = UnsafeBufferPointer(first)
                return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: words + 2 * words * count) { buffer in
                    // The capacity is exact: the customer's words, then (grant, deny) per group.
                    guard let customer = buffer.baseAddress else { return .small(0) }
                    buffer.initialize(repeating: 0)
                    let bits = customer + words
                    for document in documents {
                        document.accumulate(groups: groups, first: first, context: context, bits: bits)
                    }
                    for index in 0..<count where first[index] == index {
                        let grant = bits + index * 2 * words
                        for word in 0..<words { customer[word] |= grant[word] & ~grant[words + word] }
                    }
                    return CapabilityBits(words: UnsafeBufferPointer(start: customer, count: words))
                }
            }
        }
    }

    private static let placeholderHash = StringTable.hash(of: GetCustomerGroupsResponse.sandboxPlaceholderGroupID)
}

/// For each group of a response, the index of the first group with the same id.
struct MergePlan {
    let first: [Int]

    init(_ groups: UnsafeBufferPointer<GroupEntry>) {
        var firstByID: [String: Int] = [:]
        firstByID.reserveCapacity(groups.count)
        var first: [Int] = []
        first.reserveCapacity(groups.count)
        for (index, group) in groups.enumerated() {
            if let existing = firstByID[group.groupID] {
                first.append(existing)
            } else {
                firstByID[group.groupID] = index
                first.append(index)
            }
        }
        self.first = first
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
