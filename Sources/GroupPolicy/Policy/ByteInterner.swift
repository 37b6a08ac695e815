import GroupPolicyBasics

/// Byte strings numbered in first-seen order, stored once each in one buffer: the interning that
/// the parser and compilation do, keyed by exact bytes.
///
/// Its own open-addressing table with a cheap hash (FNV-1a) rather than a `Set<String>`: two
/// spellings that `String` calls equal (by canonical equivalence) must be two keys here, as the
/// tables compare bytes, and a policy may hold millions of names, each hashed once.
struct ByteInterner {
    private(set) var bytes: [UInt8] = []
    /// String `k` spans `bytes[ends[k - 1]..<ends[k]]` (from 0 for the first).
    private(set) var ends: [Int] = []
    private var hashes: [UInt64] = []
    /// Per slot, the string's number plus one in the low 32 bits (0: an empty slot) and the high
    /// half of its hash in the high 32 bits, so that a probe touches only the slot unless the
    /// hashes agree (each other array is a cache miss in a table of millions); at most half full.
    private var slots = [UInt64](repeating: 0, count: 16)

    var count: Int { ends.count }

    /// The number of `value`, if it was added.
    func index(of value: String) -> UInt32? {
        var value = value
        return value.withUTF8 { utf8 in find(utf8, hash: Self.hash(utf8)).index }
    }

    /// The number of `value`, adding it first if it is new.
    mutating func insert(_ value: String) -> UInt32 {
        var value = value
        return value.withUTF8 { utf8 in
            let hash = Self.hash(utf8)
            let (found, slot) = find(utf8, hash: hash)
            if let found { return found }
            bytes.append(contentsOf: utf8)
            ends.append(bytes.count)
            hashes.append(hash)
            let added = UInt32(ends.count - 1)
            slots[slot] = Self.slotValue(index: added, hash: hash)
            if ends.count * 2 > slots.count { grow() }
            return added
        }
    }

    private static func hash(_ utf8: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }

    @inline(__always)
    private static func slotValue(index: UInt32, hash: UInt64) -> UInt64 {
        (hash & 0xFFFF_FFFF_0000_0000) | UInt64(index + 1)
    }

    /// The number of the string with these bytes, or the empty slot where it would go.
    private func find(_ utf8: UnsafeBufferPointer<UInt8>, hash: UInt64) -> (index: UInt32?, slot: Int) {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash ^ (hash >> 29)) & mask
        let tag = hash & 0xFFFF_FFFF_0000_0000
        while slots[slot] != 0 {
            let value = slots[slot]
            if value & 0xFFFF_FFFF_0000_0000 == tag {
                let index = Int(UInt32(truncatingIfNeeded: value) - 1)
                let start = index == 0 ? 0 : Int(ends[index - 1])
                let end = Int(ends[index])
                let equal = bytes.withUnsafeBufferPointer { buffer in
                    bytesEqual(UnsafeBufferPointer(rebasing: buffer[start..<end]), utf8)
                }
                if equal { return (UInt32(index), slot) }
            }
            slot = (slot + 1) & mask
        }
        return (nil, slot)
    }

    private mutating func grow() {
        var larger = [UInt64](repeating: 0, count: slots.count * 2)
        let mask = larger.count - 1
        for (index, hash) in hashes.enumerated() {
            var slot = Int(truncatingIfNeeded: hash ^ (hash >> 29)) & mask
            while larger[slot] != 0 { slot = (slot + 1) & mask }
            larger[slot] = Self.slotValue(index: UInt32(index), hash: hash)
        }
        slots = larger
    }
}
