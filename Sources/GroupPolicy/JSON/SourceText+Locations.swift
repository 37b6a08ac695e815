import GroupPolicyBasics

extension SourceText {
    /// The source location of the byte at `offset`.
    package func location(ofOffset offset: Int) -> SourcePosition {
        let (line, column) = lineAndColumn(ofOffset: offset)
        return SourcePosition(file: fileName, line: line, column: column)
    }

    /// The source locations of many byte offsets at once, in the order given.
    ///
    /// One pass over the bytes serves every offset, so locating every rule of a minified policy
    /// (one long line) costs one scan of the file instead of one scan of the line per rule.
    func locations(ofOffsets offsets: [Int]) -> [SourcePosition] {
        // Offsets usually come in file order already: then there is nothing to sort.
        let inOrder = zip(offsets, offsets.dropFirst()).allSatisfy { $0 <= $1 }
        let order = inOrder ? Array(offsets.indices) : offsets.indices.sorted { offsets[$0] < offsets[$1] }
        var locations = [SourcePosition](
            repeating: SourcePosition(file: fileName, line: 1, column: 1),
            count: offsets.count
        )
        var line = 1
        var column = 1
        var position = 0
        for index in order {
            let target = max(0, min(offsets[index], bytes.count))
            while position < target {
                let byte = bytes[position]
                if byte == 0x0A {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    // Continuation bytes do not start a new scalar.
                    column += 1
                }
                position += 1
            }
            locations[index] = SourcePosition(file: fileName, line: line, column: column)
        }
        return locations
    }
}
