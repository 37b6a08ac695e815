/// Deduplicates (grant, deny) bit-set pairs; pair 0 is the empty pair.
struct PairPool {
    let wordCount: Int
    /// Working pairs while tables are built, 2W words each.
    var scratch: [UInt64] = []
    var scratchCount = 0

    init(wordCount: Int) {
        self.wordCount = wordCount
    }

    mutating func newScratchPair() -> Int {
        scratch.append(contentsOf: repeatElement(0, count: 2 * wordCount))
        scratchCount += 1
        return scratchCount - 1
    }

    mutating func or(scratchPair: Int, bits: RuleBits, deny: Bool) {
        let base = scratchPair * 2 * wordCount + (deny ? wordCount : 0)
        scratch.withUnsafeMutableBufferPointer { scratch in
            if let start = scratch.baseAddress { bits.or(into: start + base) }
        }
    }

    /// Turns the tables' scratch references into deduplicated final pair indices.
    func finalize(_ tables: [CellTableBuilder]) -> (words: [UInt64], tables: [[UInt32]]) {
        // Deduplicated by content through a small open-addressing table over the final words, with
        // a cheap hash of the words: a policy of millions of rules builds millions of pairs.
        let width = 2 * wordCount
        var words = [UInt64](repeating: 0, count: width)
        var capacity = 16
        while capacity < (scratchCount + 1) * 2 { capacity *= 2 }
        let mask = capacity - 1
        /// Final pair indices plus one; 0 is an empty slot.
        var slots = [UInt32](repeating: 0, count: capacity)
        func hash(_ source: [UInt64], from start: Int) -> Int {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for offset in 0..<width {
                hash = (hash ^ source[start + offset]) &* 0x9E37_79B9_7F4A_7C15
                hash ^= hash >> 29
            }
            return Int(truncatingIfNeeded: hash) & mask
        }
        /// The slot holding a pair equal to `source[start..<start + width]`, or the empty slot
        /// where it goes.
        func slot(of source: [UInt64], from start: Int) -> Int {
            var slot = hash(source, from: start)
            while slots[slot] != 0 {
                let candidate = Int(slots[slot] - 1) * width
                var equal = true
                for offset in 0..<width where words[candidate + offset] != source[start + offset] {
                    equal = false
                    break
                }
                if equal { return slot }
                slot = (slot + 1) & mask
            }
            return slot
        }
        slots[slot(of: words, from: 0)] = 1
        var finalIndexOfScratch = [UInt32](repeating: 0, count: scratchCount)
        for pair in 0..<scratchCount {
            let start = pair * width
            let found = slot(of: scratch, from: start)
            if slots[found] == 0 {
                slots[found] = UInt32(words.count / width) + 1
                words.append(contentsOf: scratch[start..<(start + width)])
            }
            finalIndexOfScratch[pair] = slots[found] - 1
        }
        let finalTables = tables.map { table in
            table.cells.map { $0 == 0 ? 0 : finalIndexOfScratch[Int($0) - 1] }
        }
        return (words, finalTables)
    }
}
