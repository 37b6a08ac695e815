import Testing

@testable import GroupPolicyBasics

/// Lines and columns at the edges: offsets outside the text are clamped to it, a column counts
/// Unicode scalars (a tab or an emoji is one), and a line starts after its newline.
@Suite struct SourceTextTests {
    @Test(
        arguments: [
            (-5, 1, 1),
            (0, 1, 1),
            (2, 1, 3),
            (3, 2, 1),
            (4, 2, 2),
            (8, 2, 3),
            (9, 2, 4),
            (10, 3, 1),
            (11, 3, 1),
            (1_000, 3, 1),
            (Int.max, 3, 1),
            (Int.min, 1, 1),
        ]
    )
    func lineAndColumn(offset: Int, line: Int, column: Int) {
        // "ab\n", a tab, an emoji of four bytes, "c\n": ten bytes, the last line empty.
        let source = SourceText(fileName: "in.json", bytes: Array("ab\n\t\u{1F600}c\n".utf8))
        #expect(source.bytes.count == 10)
        let found = source.lineAndColumn(ofOffset: offset)
        #expect(found.line == line && found.column == column)
    }

    @Test func anEmptyTextIsOneEmptyLine() {
        let source = SourceText(fileName: nil, bytes: [])
        #expect(source.fileName == nil)
        for offset in [-1, 0, 7] {
            let found = source.lineAndColumn(ofOffset: offset)
            #expect(found.line == 1 && found.column == 1, "offset \(offset)")
        }
    }
}
