import GroupPolicyBasics

/// The response's groups as every evaluation path sees them (the fast path, ``Decision`` and
/// ``Explanation``): the one owner of the two rules about which groups there are.
///
/// - **Merge.** Groups that share a `groupId`, byte for byte, are one group: the first
///   occurrence's id, type and position, and the role entries of every occurrence in response
///   order. Two spellings that `String` calls equal (a precomposed "é" and "e" with a combining
///   accent) are two groups, as every other comparison of the engine is by bytes.
/// - **The placeholder.** In Production, Apple's sandbox placeholder group gets nothing.
///
/// See the DocC article "Evaluation semantics", sections "Sandbox" and "Duplicate groups".
///
/// The plan is two arrays the caller provides: `first[i]` is the index of the first group with
/// group `i`'s id, `next[i]` the next group with that id (-1: none). Building it is linear in the
/// response: a few groups compare their ids directly, more go through a table of the ids' hashes
/// in temporary memory.
struct GroupMerge {
    let groups: UnsafeBufferPointer<GroupEntry>
    /// For each group, the index of the first group with its id.
    let first: UnsafeMutableBufferPointer<Int32>
    /// For each group, the next group with its id, or -1.
    let next: UnsafeMutableBufferPointer<Int32>

    /// Plans the merge of `groups` into the caller's `first` and `next` (each `groups.count` long).
    init(
        _ groups: UnsafeBufferPointer<GroupEntry>,
        first: UnsafeMutableBufferPointer<Int32>,
        next: UnsafeMutableBufferPointer<Int32>
    ) {
        self.groups = groups
        self.first = first
        self.next = next
        let count = groups.count
        countWork(count)
        guard count > 1 else {
            if count == 1 {
                first[0] = 0
                next[0] = -1
            }
            return
        }
        guard count > Self.fewGroups else {
            // Few groups (most responses): each id's hash compared with those before it, and the
            // ids themselves when the hashes agree.
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: count) { hashes in
                for index in 0..<count {
                    first[index] = Int32(index)
                    next[index] = -1
                    let hash = StringTable.hash(of: groups[index].groupID)
                    hashes[index] = hash
                    for earlier in 0..<index
                    where hashes[earlier] == hash && first[earlier] == Int32(earlier)
                        && groups[earlier].groupID.isExactly(groups[index].groupID)
                    {
                        first[index] = Int32(earlier)
                        var last = earlier
                        while next[last] >= 0 { last = Int(next[last]) }
                        next[last] = Int32(index)
                        break
                    }
                }
            }
            return
        }
        var capacity = 4
        while capacity < 2 * count { capacity <<= 1 }
        let mask = capacity - 1
        withScratchBuffer(of: UInt64.self, capacity: capacity) { slots in
            // A slot holds a group's index plus one in its low half (0: empty) and the high half of
            // the id's hash, so a probe compares ids only when the hashes agree.
            slots.initialize(repeating: 0)
            // Backwards, so that each slot ends holding an id's first group and `next` links every
            // group to the one after it.
            for index in stride(from: count - 1, through: 0, by: -1) {
                let groupID = groups[index].groupID
                let hash = StringTable.hash(of: groupID)
                let tag = hash & 0xFFFF_FFFF_0000_0000
                var slot = Int(truncatingIfNeeded: hash ^ (hash >> 29)) & mask
                next[index] = -1
                while slots[slot] != 0 {
                    countWork(1)
                    let known = Int(UInt32(truncatingIfNeeded: slots[slot]) - 1)
                    if slots[slot] & 0xFFFF_FFFF_0000_0000 == tag && groups[known].groupID.isExactly(groupID) {
                        next[index] = Int32(known)
                        break
                    }
                    slot = (slot + 1) & mask
                }
                slots[slot] = tag | UInt64(index + 1)
                first[index] = -1
            }
        }
        for index in 0..<count where first[index] < 0 {
            var member = index
            while member >= 0 {
                first[member] = Int32(index)
                member = Int(next[member])
            }
        }
    }

    /// The most groups merged by comparing each id with the ids before it (at most 28 comparisons);
    /// more go through a table of the ids' hashes.
    private static let fewGroups = 8

    /// Plans the merge of `groups` in temporary memory and calls `body` with the plan.
    static func withPlan<Result>(
        _ groups: UnsafeBufferPointer<GroupEntry>,
        _ body: (GroupMerge) -> Result
    ) -> Result {
        withScratchBuffer(of: Int32.self, capacity: 2 * groups.count) { buffer in
            let first = UnsafeMutableBufferPointer(rebasing: buffer[0..<groups.count])
            let next = UnsafeMutableBufferPointer(rebasing: buffer[groups.count...])
            return body(GroupMerge(groups, first: first, next: next))
        }
    }

    /// Whether group `index` is the first with its id (the merged group's representative).
    @inline(__always)
    func isFirst(_ index: Int) -> Bool { first[index] == Int32(index) }

    /// The merged group's role entries: every occurrence's, in response order (the first
    /// occurrence's own array when the id is not repeated).
    @inline(__always)
    func entries(ofFirst index: Int) -> [RoleEntry] {
        var member = Int(next[index])
        guard member >= 0 else { return groups[index].roles }
        var entries = groups[index].roles
        while member >= 0 {
            entries += groups[member].roles
            member = Int(next[member])
        }
        return entries
    }

    /// Whether a group with this id gets nothing in this environment: Apple's sandbox placeholder,
    /// in Production.
    @inline(__always)
    static func ignores(_ groupID: String, in environment: StoreEnvironment) -> Bool {
        // Its first byte first: most group ids differ there, and the check is per group.
        environment == .production && groupID.utf8.first == UInt8(ascii: "9")
            && groupID.isExactly(GetCustomerGroupsResponse.sandboxPlaceholderGroupID)
    }
}
