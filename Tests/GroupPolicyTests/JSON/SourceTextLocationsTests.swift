import GroupPolicyBasics
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

@Suite struct SourceTextLocationsTests {
    /// The one-pass locator must agree with the per-offset one for every offset, in any order.
    @Test func batchLocationsAgreeWithSingleLookups() {
        let source = SourceText(fileName: "f", bytes: bytes("ab\n\u{e9}\u{1F600}x\n\n  {\"k\": 1}\n"))
        let offsets = Array((0...source.bytes.count + 2).reversed()) + [4, 0, 4]
        let expected = offsets.map { source.location(ofOffset: $0) }
        #expect(source.locations(ofOffsets: offsets) == expected)
        #expect(source.locations(ofOffsets: [10, 3]).map { "\($0)" } == ["f:2:4", "f:2:1"])
    }

    /// The end of a text of every length around the checkpoint stride is on its last line (the
    /// per-offset lookups over the same texts are tested in GroupPolicyBasicsTests).
    @Test(arguments: [0, 1, 255, 256, 257, 511, 512, 700])
    func theEndIsOnTheLastLine(length: Int) {
        let pattern = Array("ab\u{E9}c\n\u{1F600}xyz".utf8)
        let bytes = (0..<length).map { pattern[$0 % pattern.count] }
        let source = SourceText(fileName: "f.json", bytes: bytes)
        let line = 1 + bytes.count { $0 == 0x0A }
        #expect(source.locations(ofOffsets: [bytes.count, 0]).map(\.line) == [line, 1])
    }
}
