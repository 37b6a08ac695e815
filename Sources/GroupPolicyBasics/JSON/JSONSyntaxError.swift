/// A syntax error found while scanning JSON bytes: what is wrong and at which byte offset.
package struct JSONSyntaxError: Error, Equatable {
    package var offset: Int
    package var message: String
    /// Where in the document the error happened, when the reader tracked it.
    package var path: JSONPath = .root

    /// An error at `offset` of the scanned bytes, its path not yet known.
    @inlinable
    package init(offset: Int, message: String, path: JSONPath = .root) {
        self.offset = offset
        self.message = message
        self.path = path
    }
}
