import GroupPolicyBasics

extension Policy {
    /// Conflicts between the policies of one set: ids, capability kinds, workspace ids, each reported
    /// at the later file's value.
    static func setConflicts(_ documents: [PolicyDocument], sources: [SourceText]) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        var policyIDs: [String: String] = [:]
        var kinds: [String: (CapabilityKind, String)] = [:]
        var workspaces: [String: String] = [:]
        for (document, source) in zip(documents, sources) {
            let file = document.fileName ?? "<input>"
            func conflict(at offset: Int, _ path: JSONPath, _ message: String) {
                diagnostics.append(
                    Diagnostic(
                        severity: .error,
                        kind: .conflictInSet,
                        location: source.location(ofOffset: offset),
                        jsonPath: path.description,
                        message: message
                    )
                )
            }
            /// Records `id` as this file's; reports a conflict when an earlier file has it.
            func claim(
                _ id: String,
                in claimed: inout [String: String],
                at offset: Int,
                _ path: JSONPath,
                _ message: (_ other: String) -> String
            ) {
                if let other = claimed[id] { conflict(at: offset, path, message(other)) }
                claimed[id] = file
            }
            claim(document.id, in: &policyIDs, at: document.idOffset, JSONPath.root.appending("id")) {
                "policy id '\(document.id)' is also the id of \($0)"
            }
            for capability in document.capabilities {
                if let (kind, other) = kinds[capability.name], kind != capability.kind {
                    conflict(
                        at: capability.offset,
                        JSONPath.root.appending("capabilities").appending(capability.name),
                        "capability '\(capability.name)' is '\(capability.kind.rawValue)' here but '\(kind.rawValue)' in \(other)"
                    )
                }
                kinds[capability.name] = kinds[capability.name] ?? (capability.kind, file)
            }
            for workspace in document.workspaces {
                claim(workspace.id, in: &workspaces, at: workspace.idOffset, workspace.path.appending("id")) {
                    "workspace id '\(workspace.id)' is also defined in \($0)"
                }
            }
        }
        return diagnostics
    }
}
