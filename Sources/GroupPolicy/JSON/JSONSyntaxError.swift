package import GroupPolicyBasics

/// A syntax error found while scanning JSON bytes: what is wrong and at which byte offset.
package struct JSONSyntaxError: Error, Equatable {
    package var offset: Int
    package var message: String
    /// Where in the document the error happened, when the reader tracked it.
    package var path: JSONPath = .root
}
