import Testing

@testable import GroupPolicyBasics

/// Comparison by exact bytes, where `String`'s `==` compares by canonical equivalence: a
/// precomposed and a decomposed spelling, a singleton (the Angstrom sign) and Hangul jamo.
@Suite struct StringExactTests {
    static let equivalentSpellings: [(String, String)] = [
        ("caf\u{E9}", "cafe\u{301}"),
        ("\u{212B}", "\u{C5}"),
        ("\u{AC00}", "\u{1100}\u{1161}"),
    ]

    @Test(arguments: equivalentSpellings)
    func canonicallyEquivalentSpellingsAreNotExactlyEqual(one: String, other: String) {
        #expect(one == other)
        #expect(one.isExactly(other) == false)
        #expect(other.isExactly(one) == false)
        #expect(one.isExactly(one))
        #expect(other.isExactly(String(Substring(other))))
    }

    /// Lengths around the eight bytes compared at a time, differing only in the last byte, the
    /// first, or not at all.
    @Test(arguments: [0, 1, 7, 8, 9, 15, 16, 17, 64])
    func sameLengthStringsDifferingInOneByte(length: Int) {
        let text = String(repeating: "a", count: length)
        #expect(text.isExactly(String(repeating: "a", count: length)))
        #expect(text.isExactly(text + "a") == false)
        guard length > 0 else { return }
        #expect(text.isExactly(String(repeating: "a", count: length - 1) + "b") == false)
        #expect(text.isExactly("b" + String(repeating: "a", count: length - 1)) == false)
    }

    @Test(arguments: equivalentSpellings)
    func aSetHoldsOnlyTheExactSpelling(stored: String, asked: String) {
        let names: Set = [stored, "other"]
        #expect(names.contains(asked))
        #expect(names.containsExactly(asked) == false)
        #expect(names.containsExactly(stored))
        #expect(names.containsExactly("missing") == false)
        #expect(Set<String>().containsExactly(stored) == false)
    }

    @Test(arguments: equivalentSpellings)
    func aDictionaryAnswersOnlyTheExactSpelling(stored: String, asked: String) {
        let values = [stored: 1, "other": 2]
        #expect(values[asked] == 1)
        #expect(values.valueExactly(for: asked) == nil)
        #expect(values.valueExactly(for: stored) == 1)
        #expect(values.valueExactly(for: "other") == 2)
        #expect(values.valueExactly(for: "missing") == nil)
    }

    @Test func bytesEqualComparesCountsThenBytes() {
        let empty: [UInt8] = []
        let bytes: [UInt8] = Array("0123456789".utf8)
        empty.withUnsafeBufferPointer { none in
            #expect(bytesEqual(none, none))
            bytes.withUnsafeBufferPointer { some in
                #expect(bytesEqual(some, some))
                #expect(bytesEqual(none, some) == false)
                #expect(bytesEqual(UnsafeBufferPointer(rebasing: some[0..<9]), some) == false)
                #expect(
                    bytesEqual(UnsafeBufferPointer(rebasing: some[1..<10]), UnsafeBufferPointer(rebasing: some[0..<9]))
                        == false
                )
                #expect(bytesEqual(UnsafeBufferPointer(rebasing: some[0..<0]), none))
            }
        }
    }
}
