/// Collects diagnostics for one source file while it is validated, turning byte offsets into
/// locations, and offers the typed readers every strict format here shares.
package final class DiagnosticCollector {
    package let source: SourceText
    private(set) var diagnostics: [Diagnostic] = []
    /// The work left for "did you mean" suggestions in this document.
    package let suggestions = SuggestionBudget()

    package init(source: SourceText) {
        self.source = source
    }

    package var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

    package func error(_ kind: Diagnostic.Kind, at offset: Int, _ path: JSONPath, _ message: String) {
        diagnostics.append(
            Diagnostic(
                severity: .error,
                kind: kind,
                location: source.location(ofOffset: offset),
                jsonPath: path.description,
                message: message
            )
        )
    }

    func warning(_ kind: Diagnostic.Kind, at offset: Int, _ path: JSONPath, _ message: String) {
        diagnostics.append(
            Diagnostic(
                severity: .warning,
                kind: kind,
                location: source.location(ofOffset: offset),
                jsonPath: path.description,
                message: message
            )
        )
    }

    /// Errors first, then warnings, each in file order.
    package var sortedDiagnostics: [Diagnostic] {
        // Sorts positions by precomputed keys, then copies each diagnostic once: sorting the
        // diagnostics themselves moved and copied every one of them many times (a large policy
        // can have a warning per rule).
        let keys = diagnostics.map { diagnostic in
            (diagnostic.severity == .error ? 0 : 1, diagnostic.location?.line ?? 0, diagnostic.location?.column ?? 0)
        }
        let order = keys.indices.sorted { left, right in
            keys[left] != keys[right] ? keys[left] < keys[right] : left < right
        }
        return order.map { diagnostics[$0] }
    }

    // MARK: Typed readers

    /// The members of an object whose keys must all be in `allowed`; reports unknown keys (with a
    /// suggestion) and a non-object value, returning `nil` for the latter.
    package func object(_ node: JSONNode, _ path: JSONPath, allowed: [String]) -> ObjectFields? {
        guard case .object(let members) = node.value else {
            error(.wrongType, at: node.offset, path, "expected an object, found \(node.value.typeName)")
            return nil
        }
        // Lengths first: `==` on unequal strings takes a slow path, and most keys differ in length.
        for member in members
        where !allowed.contains(where: { $0.utf8.count == member.key.utf8.count && $0 == member.key }) {
            let suggestion = Suggestion.closest(to: member.key, among: allowed).map { " (did you mean '\($0)'?)" } ?? ""
            error(
                .unknownKey,
                at: member.keyOffset,
                path.appending(member.key),
                "unknown key '\(member.key)'\(suggestion); allowed: \(allowed.joined(separator: ", "))"
            )
        }
        return ObjectFields(node: node, path: path, members: members, collector: self)
    }

    /// A string value; `path` is built only to report a value of another type.
    package func string(_ node: JSONNode, _ path: @autoclosure () -> JSONPath) -> String? {
        guard case .string(let value) = node.value else {
            error(.wrongType, at: node.offset, path(), "expected a string, found \(node.value.typeName)")
            return nil
        }
        return value
    }

    /// An array of strings, each with its offset.
    ///
    /// With `minimumCount` 1 an empty array is reported.
    package func stringArray(_ node: JSONNode, _ path: JSONPath, minimumCount: Int = 0) -> [Located<String>]? {
        guard case .array(let elements) = node.value else {
            error(.wrongType, at: node.offset, path, "expected an array of strings, found \(node.value.typeName)")
            return nil
        }
        if elements.count < minimumCount {
            error(.emptyArray, at: node.offset, path, "must hold at least one value")
            return nil
        }
        var values: [Located<String>] = []
        var valid = true
        values.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            let elementPath = path.appending(index)
            if let value = string(element, elementPath) {
                values.append(Located(value: value, offset: element.offset, path: elementPath))
            } else {
                valid = false
            }
        }
        return valid ? values : nil
    }

    /// A string or a non-empty array of strings.
    func stringOrArray(_ node: JSONNode, _ path: JSONPath) -> [Located<String>]? {
        if case .string(let value) = node.value {
            return [Located(value: value, offset: node.offset, path: path)]
        }
        guard case .array = node.value else {
            error(
                .wrongType,
                at: node.offset,
                path,
                "expected a string or an array of strings, found \(node.value.typeName)"
            )
            return nil
        }
        return stringArray(node, path, minimumCount: 1)
    }
}
