import Testing

@testable import GroupPolicyBasics

/// Lines and columns from the per-stride checkpoints agree with counting from the start, at every
/// offset, across stride boundaries and multi-byte characters.
@Suite struct SourceTextCheckpointTests {
    @Test(arguments: [0, 1, 255, 256, 257, 511, 512, 700])
    func everyOffsetMatchesANaiveCount(length: Int) {
        let pattern = Array("ab\u{E9}c\n\u{1F600}xyz".utf8)
        let bytes = (0..<length).map { pattern[$0 % pattern.count] }
        let source = SourceText(fileName: "f.json", bytes: bytes)
        var line = 1
        var column = 1
        for offset in 0...bytes.count {
            let (foundLine, foundColumn) = source.lineAndColumn(ofOffset: offset)
            #expect(foundLine == line && foundColumn == column, "offset \(offset)")
            guard offset < bytes.count else { break }
            if bytes[offset] == 0x0A {
                line += 1
                column = 1
            } else if bytes[offset] & 0xC0 != 0x80 {
                column += 1
            }
        }
    }
}
