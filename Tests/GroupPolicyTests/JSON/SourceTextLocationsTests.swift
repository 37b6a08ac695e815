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
}
