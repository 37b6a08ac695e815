/// Every rule's capabilities as bit sets over the catalog, `wordCount` words per rule in one array
/// (one allocation for all rules, where a ``CapabilityBits`` of two or more words is one per rule).
struct RuleBitsTable: Sendable {
    let wordCount: Int
    fileprivate let words: [UInt64]

    init(wordCount: Int, ruleCount: Int, capabilities: (Int) -> [Int]) {
        self.wordCount = wordCount
        var words = [UInt64](repeating: 0, count: wordCount * ruleCount)
        for rule in 0..<ruleCount {
            for index in capabilities(rule) { words[rule * wordCount + (index >> 6)] |= 1 << UInt64(index & 63) }
        }
        self.words = words
    }

    var count: Int { wordCount == 0 ? 0 : words.count / wordCount }

    /// One rule's capabilities.
    @inline(__always)
    subscript(rule: Int) -> RuleBits {
        RuleBits(words: words, start: rule * wordCount, count: wordCount)
    }
}

/// One rule's capabilities: a view of its words in a ``RuleBitsTable``.
struct RuleBits {
    let words: [UInt64]
    let start: Int
    let count: Int

    /// Whether the capability with catalog index `index` is in the set.
    @inline(__always)
    func contains(_ index: Int) -> Bool {
        let word = index >> 6
        return index >= 0 && word < count && words[start + word] & (1 << UInt64(index & 63)) != 0
    }

    /// Calls `body` with each set bit's index, ascending, without building an array.
    @inline(__always)
    func forEachIndex(_ body: (Int) -> Void) {
        for position in 0..<count {
            var remaining = words[start + position]
            while remaining != 0 {
                body(position &* 64 &+ remaining.trailingZeroBitCount)
                remaining &= remaining &- 1
            }
        }
    }

    /// ORs the set into `count` words at `target`.
    @inline(__always)
    func or(into target: UnsafeMutablePointer<UInt64>) {
        for position in 0..<count { target[position] |= words[start + position] }
    }
}

extension RuleBitsTable {
    /// Calls `body` with each rule whose set holds capability `index`, in rule order.
    func forEachRule(containing index: Int, _ body: (Int) -> Void) {
        let word = index >> 6
        guard index >= 0, word < wordCount else { return }
        let mask: UInt64 = 1 << UInt64(index & 63)
        let stride = wordCount
        words.withUnsafeBufferPointer { words in
            var position = word
            var rule = 0
            while position < words.count {
                if words[position] & mask != 0 { body(rule) }
                position &+= stride
                rule &+= 1
            }
        }
    }
}
