/// An immutable map from strings to small integers, looked up by UTF-8 bytes with a cheap hash:
/// the per-request interning of product ids, roles and group types.
///
/// `Dictionary<String, Int>` hashes with per-process-seeded SipHash, which costs more than the rest
/// of a decision; this table hashes eight bytes per step and compares bytes only on a hash hit.
/// Keys come from the policy, never from requests, so hash flooding by a client is not possible
/// (a request's strings are only looked up, never inserted).
struct StringTable: Sendable {
    private let keyBytes: [UInt8]
    /// Key `i` is `keyBytes[keyStarts[i]..<keyStarts[i + 1]]`.
    private let keyStarts: [Int32]
    private let keyHashes: [UInt64]
    private let values: [Int32]
    /// Open addressing; each slot is a key index, or -1.
    private let slots: [Int32]
    private let slotMask: Int

    /// Builds the table; later duplicates of a key are ignored.
    init(_ entries: [(key: String, value: Int32)]) {
        var bytes: [UInt8] = []
        var starts: [Int32] = [0]
        var hashes: [UInt64] = []
        var values: [Int32] = []
        var capacity = 8
        while capacity < entries.count * 2 { capacity *= 2 }
        var slots = [Int32](repeating: -1, count: capacity)
        let mask = capacity - 1
        for (key, value) in entries {
            let utf8 = Array(key.utf8)
            let hash = utf8.withUnsafeBufferPointer { Self.hash($0) }
            var slot = Int(truncatingIfNeeded: hash) & mask
            var duplicate = false
            while slots[slot] >= 0 {
                let existing = Int(slots[slot])
                if hashes[existing] == hash,
                    Array(bytes[Int(starts[existing])..<Int(starts[existing + 1])]) == utf8
                {
                    duplicate = true
                    break
                }
                slot = (slot + 1) & mask
            }
            if duplicate { continue }
            slots[slot] = Int32(values.count)
            bytes.append(contentsOf: utf8)
            starts.append(Int32(bytes.count))
            hashes.append(hash)
            values.append(value)
        }
        self.keyBytes = bytes
        self.keyStarts = starts
        self.keyHashes = hashes
        self.values = values
        self.slots = slots
        self.slotMask = mask
    }

    var isEmpty: Bool { values.isEmpty }

    /// The value for `key`, or `nil`.
    @inline(__always)
    func value(for key: String) -> Int32? {
        if let found = key.utf8.withContiguousStorageIfAvailable({ value(forUTF8: $0) }) {
            return found
        }
        return Array(key.utf8).withUnsafeBufferPointer { value(forUTF8: $0) }
    }

    func value(forUTF8 key: UnsafeBufferPointer<UInt8>) -> Int32? {
        let hash = Self.hash(key)
        var slot = Int(truncatingIfNeeded: hash) & slotMask
        return slots.withUnsafeBufferPointer { slots in
            keyHashes.withUnsafeBufferPointer { hashes in
                while true {
                    let index = Int(slots[slot])
                    if index < 0 { return nil }
                    if hashes[index] == hash && equalsKey(index, key) { return values[index] }
                    slot = (slot + 1) & slotMask
                }
            }
        }
    }

    private func equalsKey(_ index: Int, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = Int(keyStarts[index])
        let end = Int(keyStarts[index + 1])
        guard end - start == key.count else { return false }
        return keyBytes.withUnsafeBufferPointer { stored in
            var offset = 0
            while offset < key.count {
                if stored[start + offset] != key[offset] { return false }
                offset += 1
            }
            return true
        }
    }

    /// A fast 64-bit hash: eight bytes per multiply-rotate step, then a final avalanche.
    @inline(__always)
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
        var index = 0
        let count = bytes.count
        guard let base = bytes.baseAddress else { return hash }
        let raw = UnsafeRawPointer(base)
        while index + 8 <= count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            hash = (hash ^ word) &* 0xBF58_476D_1CE4_E5B9
            hash = (hash << 31) | (hash >> 33)
            index += 8
        }
        if index < count {
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while index < count {
                tail |= UInt64(bytes[index]) << shift
                shift += 8
                index += 1
            }
            hash = (hash ^ tail) &* 0xBF58_476D_1CE4_E5B9
        }
        hash ^= hash >> 29
        hash = hash &* 0x94D0_49BB_1331_11EB
        hash ^= hash >> 32
        return hash
    }
}
