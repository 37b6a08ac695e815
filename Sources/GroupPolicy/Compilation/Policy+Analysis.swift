/// What the tools (scenario space, invariants, diff, coverage) read of a loaded policy besides its
/// public API: the parsed documents and the capability catalog. The compiled tables stay internal.
extension Policy {
    /// The parsed documents, in load order, rebuilt from the compiled form.
    ///
    /// Each document is rebuilt on the first call and kept; evaluation never calls this, so a
    /// policy that only serves requests never holds the parsed form.
    package var documents: [PolicyDocument] { compiled.documents.map(\.document) }

    /// How decisions name the rules of the document at `index`, in rule order: each rule's id,
    /// qualified as `policy/rule` in a set of several policies.
    package func ruleLabels(ofDocument index: Int) -> [String] { compiled.documents[index].ruleLabels }

    /// Where each capability the document at `index` declares is declared (the key in its
    /// `capabilities`), by name, in declaration order.
    package func capabilityDeclarations(ofDocument index: Int) -> [(name: String, location: SourcePosition?)] {
        compiled.documents[index].capabilityDeclarations.map { ($0.name, $0.location) }
    }

    /// The bit of the capability named `name`, or `nil` when no policy of the set declares it.
    package func capabilityIndex(of name: String) -> Int? { compiled.catalog.index(of: name) }
}
