/// A fixed-width bit set over capability indices; one inline word covers up to 64 capabilities.
package enum CapabilityBits: Sendable, Hashable {
    case small(UInt64)
    case large([UInt64])

    init(words: UnsafeBufferPointer<UInt64>) {
        if words.count == 1 {
            self = .small(words[0])
        } else {
            self = .large(Array(words))
        }
    }

    init(indices: some Sequence<Int>, wordCount: Int) {
        var words = [UInt64](repeating: 0, count: wordCount)
        for index in indices { words[index >> 6] |= 1 << UInt64(index & 63) }
        self = wordCount == 1 ? .small(words[0]) : .large(words)
    }

    package func contains(_ index: Int) -> Bool {
        switch self {
        case .small(let word):
            return index < 64 && word & (1 << UInt64(index)) != 0
        case .large(let words):
            let wordIndex = index >> 6
            return wordIndex < words.count && words[wordIndex] & (1 << UInt64(index & 63)) != 0
        }
    }

    var count: Int {
        switch self {
        case .small(let word): word.nonzeroBitCount
        case .large(let words): words.reduce(0) { $0 + $1.nonzeroBitCount }
        }
    }

    var isEmpty: Bool {
        switch self {
        case .small(let word): word == 0
        case .large(let words): words.allSatisfy { $0 == 0 }
        }
    }

    /// Calls `body` with each set bit's index, ascending, without building an array.
    @inline(__always)
    func forEachIndex(_ body: (Int) -> Void) {
        func visit(_ word: UInt64, base: Int) {
            var remaining = word
            while remaining != 0 {
                body(base + remaining.trailingZeroBitCount)
                remaining &= remaining - 1
            }
        }
        switch self {
        case .small(let word):
            visit(word, base: 0)
        case .large(let words):
            for (position, word) in words.enumerated() { visit(word, base: position * 64) }
        }
    }

    /// The set bits' indices, ascending.
    var indices: [Int] {
        var result: [Int] = []
        forEachIndex { result.append($0) }
        return result
    }
}
