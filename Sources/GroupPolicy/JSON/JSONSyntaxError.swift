import GroupPolicyBasics

/// A syntax error found while scanning JSON bytes: what is wrong and at which byte offset.
struct JSONSyntaxError: Error, Equatable {
    var offset: Int
    var message: String
    /// Where in the document the error happened, when the reader tracked it.
    var path: JSONPath = .root
}
