/// The bytes of one source file with the means to turn a byte offset into a line and column.
///
/// Lines and columns are 1-based; a column counts Unicode scalars from the start of the line (so a
/// tab or a multi-byte character is one column), which is what editors jump to for ASCII text.
struct SourceText: Sendable {
    /// The name diagnostics print (a path as the user gave it), or `nil` for bytes from memory.
    let fileName: String?
    let bytes: [UInt8]
    private let lineStarts: [Int]

    init(fileName: String?, bytes: [UInt8]) {
        self.fileName = fileName
        self.bytes = bytes
        var starts = [0]
        for (index, byte) in bytes.enumerated() where byte == 0x0A {
            starts.append(index + 1)
        }
        self.lineStarts = starts
    }

    /// The 1-based line and column of the byte at `offset`.
    func lineAndColumn(ofOffset offset: Int) -> (line: Int, column: Int) {
        let clamped = max(0, min(offset, bytes.count))
        // The last line start at or before the offset.
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= clamped { low = middle } else { high = middle - 1 }
        }
        var column = 1
        var index = lineStarts[low]
        while index < clamped {
            // Continuation bytes do not start a new scalar.
            if bytes[index] & 0xC0 != 0x80 { column += 1 }
            index += 1
        }
        return (low + 1, column)
    }

    /// The source location of the byte at `offset`.
    func location(ofOffset offset: Int) -> SourceLocation {
        let (line, column) = lineAndColumn(ofOffset: offset)
        return SourceLocation(file: fileName, line: line, column: column)
    }
}
