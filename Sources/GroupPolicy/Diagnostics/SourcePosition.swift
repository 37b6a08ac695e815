/// A position in a source file: the file name as given, and a 1-based line and column.
///
/// Columns count Unicode scalars from the start of the line.
public struct SourcePosition: Sendable, Hashable, CustomStringConvertible {
    /// The file's path as the caller gave it, or `nil` when the bytes came from memory.
    public var file: String?
    /// The 1-based line.
    public var line: Int
    /// The 1-based column, in Unicode scalars.
    public var column: Int

    /// Creates a position.
    public init(file: String?, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    /// `file:line:column`, with `<input>` standing in for a missing file name.
    public var description: String { "\(file ?? "<input>"):\(line):\(column)" }
}
