import GroupPolicy

extension CapabilityBits {
    /// Calls `body` with each index set in exactly one of two bit sets over the same catalog,
    /// ascending, and whether it is set in `new`.
    static func forEachDifference(
        _ old: CapabilityBits,
        _ new: CapabilityBits,
        _ body: (Int, Bool) -> Void
    ) {
        func visit(_ oldWord: UInt64, _ newWord: UInt64, base: Int) {
            var remaining = oldWord ^ newWord
            while remaining != 0 {
                let bit = remaining.trailingZeroBitCount
                body(base + bit, newWord & (1 << UInt64(bit)) != 0)
                remaining &= remaining - 1
            }
        }
        switch (old, new) {
        case (.small(let oldWord), .small(let newWord)):
            visit(oldWord, newWord, base: 0)
        case (.large(let oldWords), .large(let newWords)):
            for position in 0..<max(oldWords.count, newWords.count) {
                visit(
                    position < oldWords.count ? oldWords[position] : 0,
                    position < newWords.count ? newWords[position] : 0,
                    base: position * 64
                )
            }
        case (.small(let oldWord), .large(let newWords)):
            for position in newWords.indices {
                visit(position == 0 ? oldWord : 0, newWords[position], base: position * 64)
            }
        case (.large(let oldWords), .small(let newWord)):
            for position in oldWords.indices {
                visit(oldWords[position], position == 0 ? newWord : 0, base: position * 64)
            }
        }
    }

    /// The 64-bit word at `position` (0 past the set's words).
    func word(at position: Int) -> UInt64 {
        switch self {
        case .small(let word): position == 0 ? word : 0
        case .large(let words): position < words.count ? words[position] : 0
        }
    }
}
