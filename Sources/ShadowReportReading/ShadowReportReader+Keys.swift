import GroupPolicy
import GroupPolicyBasics

extension ShadowReportReader {
    /// The keys of one open object, to refuse a key it already has: a hash table of where each
    /// key is in the input, 8 bytes a key's slot, rather than a set of strings.
    ///
    /// Keys are the same when their decoded bytes are. The hash is the standard library's, seeded
    /// per process, so no input can make its keys collide on purpose; a slot keeps 32 bits of it
    /// beside the key's offset, so growing the table hashes nothing again, and keys whose hashes
    /// differ there are never decoded to be compared.
    struct KeySet {
        /// Per key, `hash << 32 | offset`, the offset of its first content byte; 0 is an empty slot.
        ///
        /// An offset is never 0 (a quote is before it), and fits in 32 bits: the reader reads at
        /// most 64 MiB.
        private var slots: [UInt64] = []
        private var count = 0

        /// Empties the set for the next object; a large table is released, a small one cleared.
        mutating func reset() {
            if slots.count > 64 {
                slots = []
            } else {
                for index in slots.indices { slots[index] = 0 }
            }
            count = 0
        }

        /// Adds the key `value` whose content starts at byte `start` of `bytes`; `false` when the
        /// object already has it.
        mutating func insert(_ value: String, at start: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            if (count + 1) * 2 > slots.count { grow() }
            var hasher = Hasher()
            if value.utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil
            {
                Array(value.utf8).withUnsafeBytes { hasher.combine(bytes: $0) }
            }
            let hash = UInt64(UInt32(truncatingIfNeeded: hasher.finalize()))
            let mask = slots.count - 1
            var index = Int(hash) & mask
            while slots[index] != 0 {
                let slot = slots[index]
                if slot >> 32 == hash, Self.key(at: Int(slot & 0xFFFF_FFFF), in: bytes).utf8.elementsEqual(value.utf8) {
                    return false
                }
                index = (index + 1) & mask
            }
            slots[index] = hash << 32 | UInt64(start)
            count += 1
            return true
        }

        private mutating func grow() {
            let old = slots
            slots = [UInt64](repeating: 0, count: max(16, old.count * 2))
            let mask = slots.count - 1
            for slot in old where slot != 0 {
                var index = Int(slot >> 32) & mask
                while slots[index] != 0 { index = (index + 1) & mask }
                slots[index] = slot
            }
        }

        /// The decoded key whose content starts at `start`: a string the scanner already checked.
        private static func key(at start: Int, in bytes: UnsafeBufferPointer<UInt8>) -> String {
            var scanner = JSONScanner(bytes: bytes)
            scanner.position = start - 1
            return (try? scanner.readString()) ?? ""
        }
    }
}
