package import GroupPolicyBasics

/// An object's members by key, after its keys were checked.
package struct ObjectFields {
    let node: JSONNode
    let path: JSONPath
    let members: [JSONMember]
    let collector: DiagnosticCollector

    package subscript(key: String) -> JSONNode? {
        // Lengths first: `==` on unequal strings takes a slow path, and most keys differ in length.
        members.first { $0.key.utf8.count == key.utf8.count && $0.key == key }?.value
    }

    /// The value of a required key; reports it missing (at the object) when absent.
    package func required(_ key: String) -> JSONNode? {
        guard let value = self[key] else {
            collector.error(.missingKey, at: node.offset, path.appending(key), "missing required key '\(key)'")
            return nil
        }
        return value
    }

    /// An optional string member (`nil` when absent or invalid; invalid is reported).
    func optionalString(_ key: String) -> String? {
        self[key].flatMap { collector.string($0, path.appending(key)) }
    }
}
