import GroupPolicyBasics

/// An immutable map from strings to small integers, looked up by UTF-8 bytes with a cheap hash:
/// the per-request interning of product ids, roles and group types.
///
/// `Dictionary<String, Int>` hashes with per-process-seeded SipHash, which costs more than the rest
/// of a decision. Here a key of up to 16 bytes (every role, group type and most product ids) is
/// packed into two words that identify it exactly, so a lookup is two loads, a multiply-mix and
/// word compares; longer keys hash eight bytes per step and compare bytes on a hash hit.
/// Keys come from the policy, never from requests, so hash flooding by a client is not possible
/// (a request's strings are only looked up, never inserted).
struct StringTable: Sendable {
    fileprivate struct Slot {
        /// The packed key (keys of up to 16 bytes), or the key's hash and byte offset (longer keys).
        var first: UInt64 = 0
        var second: UInt64 = 0
        /// The key's length in bytes; -1 for an empty slot.
        var count: Int32 = -1
        var value: Int32 = 0
    }

    /// The bytes of the keys longer than 16 bytes.
    private let longKeyBytes: TableStorage<UInt8>
    /// Open addressing with linear probing, at most half full (three quarters for a large table), so every probe sequence ends at an
    /// empty slot.
    private let slots: TableStorage<Slot>
    private let slotMask: Int
    /// The number of distinct keys.
    let count: Int

    /// Builds the table; later duplicates of a key are ignored.
    init(_ entries: [(key: String, value: Int32)]) {
        var longBytes: [UInt8] = []
        var capacity = 8
        // At most half full; a table of a million slots or more, at most three quarters full (its
        // probes are a little longer, and a policy naming millions of products takes half the
        // memory: 24 bytes a slot).
        while capacity < entries.count * 2 && (capacity < Self.largeTableSlots || capacity * 3 < entries.count * 4) {
            capacity *= 2
        }
        var slots = [Slot](repeating: Slot(), count: capacity)
        let mask = capacity - 1
        var count = 0
        for (key, value) in entries {
            // The key's bytes in place, without a copy per key: a table may hold millions of names.
            var key = key
            let added = key.withUTF8 { utf8 in
                Self.insert(utf8, value: value, into: &slots, mask: mask, longBytes: &longBytes)
            }
            if added { count += 1 }
        }
        self.longKeyBytes = TableStorage(longBytes)
        self.slots = TableStorage(slots)
        self.slotMask = mask
        self.count = count
    }

    /// Puts one key in `slots` unless it is there already; whether it was added.
    private static func insert(
        _ utf8: UnsafeBufferPointer<UInt8>,
        value: Int32,
        into slots: inout [Slot],
        mask: Int,
        longBytes: inout [UInt8]
    ) -> Bool {
        var slot = Slot(count: Int32(utf8.count), value: value)
        if utf8.count <= 16 {
            (slot.first, slot.second) = pack(UnsafeRawBufferPointer(utf8))
        } else {
            slot.first = hash(UnsafeRawBufferPointer(utf8))
        }
        var index = Int(truncatingIfNeeded: mix(slot)) & mask
        while slots[index].count >= 0 {
            let other = slots[index]
            if other.count == slot.count && other.first == slot.first {
                if utf8.count <= 16 {
                    if other.second == slot.second { return false }
                } else {
                    let start = Int(other.second)
                    let equal = longBytes.withUnsafeBufferPointer { stored in
                        bytesEqual(
                            UnsafeBufferPointer(rebasing: stored[start..<(start + utf8.count)]),
                            utf8
                        )
                    }
                    if equal { return false }
                }
            }
            index = (index + 1) & mask
        }
        if utf8.count > 16 {
            slot.second = UInt64(longBytes.count)
            longBytes.append(contentsOf: utf8)
        }
        slots[index] = slot
        return true
    }

    /// The size from which a table may be three quarters full rather than half.
    static let largeTableSlots = 1 << 20

    var isEmpty: Bool { count == 0 }

    /// The value for `key`, or `nil`.
    func value(for key: String) -> Int32? {
        reader.value(for: key)
    }

    /// A view of the table that looks keys up without reference counting; valid while the table is.
    @inline(__always)
    var reader: Reader {
        Reader(slots: slots.buffer, longKeys: UnsafeRawBufferPointer(longKeyBytes.buffer), slotMask: slotMask)
    }

    /// A borrowed view of a table, valid while the table it came from is alive.
    struct Reader {
        fileprivate let slots: UnsafeBufferPointer<Slot>
        fileprivate let longKeys: UnsafeRawBufferPointer
        fileprivate let slotMask: Int

        /// The value for `key`, or `nil`.
        @inline(__always)
        func value(for key: String) -> Int32? {
            #if _runtime(_ObjC)
            key.utf8.withContiguousStorageIfAvailable { value(forUTF8: UnsafeRawBufferPointer($0)) }
                ?? valueOfNonContiguous(key)
            #else
            // Without Objective-C interop every String is native UTF-8 (small or not), so its
            // contiguous storage is always available. Having no fallback call here matters: an
            // opaque call on this path makes the compiler retain and release every key looked
            // up, about a fifth of a decision's instructions.
            let found = key.utf8.withContiguousStorageIfAvailable { value(forUTF8: UnsafeRawBufferPointer($0)) }
            return found ?? nil
            #endif
        }

        #if _runtime(_ObjC)
        /// Bridged (`NSString`) strings get here.
        @inline(never)
        private func valueOfNonContiguous(_ key: String) -> Int32? {
            Array(key.utf8).withUnsafeBytes { value(forUTF8: $0) }
        }
        #endif

        /// The value for the key whose UTF-8 bytes are `key`, or `nil`.
        @inline(__always)
        func value(forUTF8 key: UnsafeRawBufferPointer) -> Int32? {
            let count = Int32(truncatingIfNeeded: key.count)
            guard key.count <= 16 else { return longValue(forUTF8: key) }
            let (first, second) = StringTable.pack(key)
            var index = Int(truncatingIfNeeded: StringTable.mix(first, second, count)) & slotMask
            while true {
                // `index` is masked by `slotMask` (slots.count - 1), so it is in range, and the table
                // is at most three quarters full, so the probe ends at an empty slot.
                let slot = slots[index]
                if slot.count == count && slot.first == first && slot.second == second { return slot.value }
                if slot.count < 0 { return nil }
                index = (index &+ 1) & slotMask
            }
        }

        /// The lookup of a key longer than 16 bytes: by hash, then bytes.
        @inline(never)
        private func longValue(forUTF8 key: UnsafeRawBufferPointer) -> Int32? {
            let count = Int32(truncatingIfNeeded: key.count)
            let hash = StringTable.hash(key)
            var index = Int(truncatingIfNeeded: StringTable.mix(hash, 0, count)) & slotMask
            while true {
                let slot = slots[index]
                if slot.count < 0 { return nil }
                if slot.count == count && slot.first == hash {
                    // A long key's bytes are longKeys[second..<second + count], in range by construction.
                    let start = Int(slot.second)
                    let stored = UnsafeRawBufferPointer(rebasing: longKeys[start..<(start + key.count)])
                    if stored.elementsEqual(key) { return slot.value }
                }
                index = (index &+ 1) & slotMask
            }
        }
    }

    /// The slot position hash of a slot's key.
    private static func mix(_ slot: Slot) -> UInt64 { mix(slot.first, slot.second, slot.count) }

    /// Spreads a packed key (or a long key's hash) over the slot positions.
    @inline(__always)
    fileprivate static func mix(_ first: UInt64, _ second: UInt64, _ count: Int32) -> UInt64 {
        var hash = (first &* 0x9E37_79B9_7F4A_7C15) ^ (second &* 0xBF58_476D_1CE4_E5B9)
        hash ^= UInt64(UInt32(bitPattern: count))
        hash ^= hash >> 32
        hash = hash &* 0x94D0_49BB_1331_11EB
        return hash ^ (hash >> 29)
    }

    /// Up to 16 bytes packed into two words without reading past them (overlapping loads); with
    /// the length, the words determine the bytes, so equal (length, words) means equal keys.
    @inline(__always)
    fileprivate static func pack(_ bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        let count = bytes.count
        if count >= 8 {
            return (
                bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            )
        }
        if count >= 4 {
            let low = UInt64(bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
            let high = UInt64(bytes.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
            return (low | high << 32, 0)
        }
        guard count > 0 else { return (0, 0) }
        return (UInt64(bytes[0]) | UInt64(bytes[count / 2]) << 8 | UInt64(bytes[count - 1]) << 16, 0)
    }

    /// The hash of a string's UTF-8 bytes, for any length (group ids, long keys).
    @inline(__always)
    static func hash(of string: String) -> UInt64 {
        if let hash = string.utf8.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) {
            return hash
        }
        return Array(string.utf8).withUnsafeBytes { hash($0) }
    }

    /// A fast 64-bit hash: eight bytes per multiply-rotate step, then a final avalanche.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let count = bytes.count
        var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(truncatingIfNeeded: count)
        if count <= 16 {
            let (first, second) = pack(bytes)
            hash = (hash ^ first) &* 0xBF58_476D_1CE4_E5B9
            hash = (hash ^ second) &* 0x94D0_49BB_1331_11EB
        } else {
            var offset = 0
            while offset + 8 <= count {
                // offset + 8 <= count: the load is inside the buffer.
                let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                hash = (hash ^ word) &* 0xBF58_476D_1CE4_E5B9
                hash = (hash << 31) | (hash >> 33)
                offset += 8
            }
            if offset < count {
                // count > 16, so the last eight bytes are inside the buffer.
                let word = bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                hash = (hash ^ word) &* 0xBF58_476D_1CE4_E5B9
            }
        }
        hash ^= hash >> 29
        hash = hash &* 0x94D0_49BB_1331_11EB
        hash ^= hash >> 32
        return hash
    }
}
