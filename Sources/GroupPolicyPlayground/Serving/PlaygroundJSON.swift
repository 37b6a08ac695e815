import GroupPolicyBasics

/// Composes the playground's answers from JSON the libraries already wrote (a decision, a report)
/// and a few values of its own, escaped by the package's one JSON writer.
enum PlaygroundJSON {
    /// A JSON string literal.
    static func string(_ text: String) -> String {
        JSONWriter.quoted(text)
    }

    /// A JSON array of strings.
    static func strings(_ values: some Sequence<String>) -> String {
        "[" + values.map(string).joined(separator: ",") + "]"
    }

    /// An object whose members are JSON text already, in the order given.
    static func object(_ members: KeyValuePairs<String, String>) -> String {
        "{" + members.map { "\(string($0.key)):\($0.value)" }.joined(separator: ",") + "}"
    }
}
