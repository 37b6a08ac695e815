/// The bytes of one source file with the means to turn a byte offset into a line and column.
///
/// Lines and columns are 1-based; a column counts Unicode scalars from the start of the line (so a
/// tab or a multi-byte character is one column), which is what editors jump to for ASCII text.
package struct SourceText: Sendable {
    /// The name diagnostics print (a path as the user gave it), or `nil` for bytes from memory.
    package let fileName: String?
    /// The file's bytes.
    package let bytes: [UInt8]
    private let lineStarts: [Int]
    /// Unicode scalars that start before byte `k * checkpointStride`, for every `k`: columns are
    /// differences of scalar counts, so a query scans at most one stride instead of its whole line
    /// (a minified policy is one line, and a scan per diagnostic made loading quadratic).
    private let scalarCheckpoints: [Int]
    private static let checkpointStride = 256

    package init(fileName: String?, bytes: [UInt8]) {
        self.fileName = fileName
        self.bytes = bytes
        var starts = [0]
        var checkpoints: [Int] = []
        checkpoints.reserveCapacity(bytes.count / Self.checkpointStride + 1)
        var scalars = 0
        // One checkpoint per stride, then a plain loop over the stride's bytes, without a division
        // per byte: a large policy is megabytes.
        bytes.withUnsafeBufferPointer { buffer in
            var chunkStart = 0
            while chunkStart < buffer.count {
                checkpoints.append(scalars)
                let chunkEnd = min(chunkStart + Self.checkpointStride, buffer.count)
                for index in chunkStart..<chunkEnd {
                    let byte = buffer[index]
                    // Continuation bytes do not start a new scalar.
                    if byte & 0xC0 != 0x80 { scalars += 1 }
                    if byte == 0x0A { starts.append(index + 1) }
                }
                chunkStart = chunkEnd
            }
        }
        if bytes.count % Self.checkpointStride == 0 { checkpoints.append(scalars) }
        self.lineStarts = starts
        self.scalarCheckpoints = checkpoints
    }

    /// The number of Unicode scalars that start before byte `offset` (`0...bytes.count`).
    private func scalarCount(before offset: Int) -> Int {
        let checkpoint = offset / Self.checkpointStride
        var count = scalarCheckpoints[checkpoint]
        var index = checkpoint * Self.checkpointStride
        while index < offset {
            if bytes[index] & 0xC0 != 0x80 { count += 1 }
            index += 1
        }
        return count
    }

    /// The 1-based line and column of the byte at `offset` (clamped to the text).
    package func lineAndColumn(ofOffset offset: Int) -> (line: Int, column: Int) {
        let clamped = max(0, min(offset, bytes.count))
        // The last line start at or before the offset.
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= clamped { low = middle } else { high = middle - 1 }
        }
        let column = scalarCount(before: clamped) - scalarCount(before: lineStarts[low]) + 1
        return (low + 1, column)
    }
}
