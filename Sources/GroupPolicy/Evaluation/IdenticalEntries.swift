import GroupPolicyBasics

/// Which role entries of a (merged) group repeat an earlier one: the one owner of "identical role
/// entries yield one grant", for ``Decision``'s grants and ``Explanation``'s alike.
///
/// Entries are identical when their product ids and their roles are the same bytes. A rule that
/// matches an entry matches every entry identical to it (matching reads only those two values), so
/// keeping the first of each kind keeps one grant per (rule, distinct entry).
enum IdenticalEntries {
    /// Whether entries `left` and `right` are identical: the same product id and the same role,
    /// byte for byte.
    @inline(__always)
    static func areIdentical(_ entries: [RoleEntry], _ left: Int, _ right: Int) -> Bool {
        entries[left].productID.isExactly(entries[right].productID)
            && entries[left].role.rawValue.isExactly(entries[right].role.rawValue)
    }

    /// Sets `firstIdentical[i]` to the index of the first entry identical to entry `i` (`i` itself
    /// for the first of its kind), in time linear in the entries: a table of their hashes in
    /// temporary memory.
    static func find(_ entries: [RoleEntry], into firstIdentical: UnsafeMutableBufferPointer<Int32>) {
        let count = entries.count
        var capacity = 4
        while capacity < 2 * count { capacity <<= 1 }
        let mask = capacity - 1
        withScratchBuffer(of: UInt64.self, capacity: capacity) { slots in
            // A slot holds an entry's index plus one in its low half (0: empty) and the high half
            // of its hash, so a probe compares entries only when the hashes agree.
            slots.initialize(repeating: 0)
            countWork(count)
            for index in 0..<count {
                let productHash = StringTable.hash(of: entries[index].productID)
                let hash = productHash ^ (StringTable.hash(of: entries[index].role.rawValue) &* 0x9E37_79B9_7F4A_7C15)
                let tag = hash & 0xFFFF_FFFF_0000_0000
                var slot = Int(truncatingIfNeeded: hash ^ (hash >> 29)) & mask
                firstIdentical[index] = Int32(index)
                while slots[slot] != 0 {
                    countWork(1)
                    let known = Int(UInt32(truncatingIfNeeded: slots[slot]) - 1)
                    if slots[slot] & 0xFFFF_FFFF_0000_0000 == tag && areIdentical(entries, known, index) {
                        firstIdentical[index] = Int32(known)
                        break
                    }
                    slot = (slot + 1) & mask
                }
                if firstIdentical[index] == Int32(index) { slots[slot] = tag | UInt64(index + 1) }
            }
        }
    }

    /// For each entry, the index of the first entry identical to it (see
    /// ``find(_:into:)``).
    static func firstIdentical(_ entries: [RoleEntry]) -> [Int32] {
        [Int32](unsafeUninitializedCapacity: entries.count) { buffer, initialized in
            find(entries, into: buffer)
            initialized = entries.count
        }
    }
}
