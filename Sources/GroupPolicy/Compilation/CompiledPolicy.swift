/// A policy set compiled: the shared capability catalog and each document's tables.
final class CompiledPolicy: Sendable {
    let catalog: CapabilityCatalog
    let documents: [CompiledDocument]
    /// The decision JSON's policy-dependent parts, escaped once.
    let jsonFragments: DecisionJSONFragments

    init(documents: [PolicyDocument]) {
        let catalog = CapabilityCatalog(declarations: documents.flatMap(\.capabilities))
        self.catalog = catalog
        let qualify = documents.count > 1
        self.documents = documents.map { document in
            CompiledDocument(document: document, catalog: catalog, qualifyRuleIDs: qualify)
        }
        jsonFragments = DecisionJSONFragments(catalog: catalog, documents: self.documents)
    }
}
