/// Collects diagnostics for one source file while it is validated, turning byte offsets into
/// locations, and offers the typed readers every strict format here shares.
package final class DiagnosticCollector {
    package let source: SourceText
    private(set) var diagnostics: [Diagnostic] = []

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
        func key(_ diagnostic: Diagnostic) -> (Int, Int, Int) {
            (diagnostic.severity == .error ? 0 : 1, diagnostic.location?.line ?? 0, diagnostic.location?.column ?? 0)
        }
        return diagnostics.enumerated().sorted { lhs, rhs in
            let (left, right) = (key(lhs.element), key(rhs.element))
            return left != right ? left < right : lhs.offset < rhs.offset
        }.map(\.element)
    }

    // MARK: Typed readers

    /// The members of an object whose keys must all be in `allowed`; reports unknown keys (with a
    /// suggestion) and a non-object value, returning `nil` for the latter.
    package func object(_ node: JSONNode, _ path: JSONPath, allowed: [String]) -> ObjectFields? {
        guard case .object(let members) = node.value else {
            error(.wrongType, at: node.offset, path, "expected an object, found \(node.value.typeName)")
            return nil
        }
        for member in members where !allowed.contains(member.key) {
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

    package func string(_ node: JSONNode, _ path: JSONPath) -> String? {
        guard case .string(let value) = node.value else {
            error(.wrongType, at: node.offset, path, "expected a string, found \(node.value.typeName)")
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
        for (index, element) in elements.enumerated() {
            if let value = string(element, path.appending(index)) {
                values.append(Located(value: value, offset: element.offset, path: path.appending(index)))
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

/// A value read from a file, with where it was.
package struct Located<Value> {
    package var value: Value
    package var offset: Int
    package var path: JSONPath
}

extension Located: Equatable where Value: Equatable {}
extension Located: Sendable where Value: Sendable {}

/// An object's members by key, after its keys were checked.
package struct ObjectFields {
    package let node: JSONNode
    let path: JSONPath
    package let members: [JSONMember]
    let collector: DiagnosticCollector

    package subscript(key: String) -> JSONNode? {
        members.first { $0.key == key }?.value
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

/// "Did you mean" suggestions by edit distance: the one implementation in the package, shared by
/// the loaders and, through `package` access, the command-line argument parser.
package enum Suggestion {
    /// The candidate closest to `word`, if it is close enough to be a plausible typo.
    package static func closest(to word: String, among candidates: some Sequence<String>) -> String? {
        let target = Array(word.unicodeScalars)
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let other = Array(candidate.unicodeScalars)
            // A typo changes at most a third of a name (at least one edit is allowed) and keeps
            // some of it: "y" is not a typo of "x".
            let budget = min(max(1, min(target.count, other.count) / 3), min(target.count, other.count) - 1)
            guard abs(target.count - other.count) <= budget else { continue }
            let distance = editDistance(target, other, limit: budget)
            if distance <= budget, best.map({ distance < $0.distance }) ?? true {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    /// Damerau-Levenshtein distance (adjacent transpositions count once), capped above `limit`.
    static func editDistance(_ lhs: [Unicode.Scalar], _ rhs: [Unicode.Scalar], limit: Int) -> Int {
        if lhs.isEmpty { return rhs.count }
        if rhs.isEmpty { return lhs.count }
        var previousPrevious = [Int](repeating: 0, count: rhs.count + 1)
        var previous = Array(0...rhs.count)
        var current = [Int](repeating: 0, count: rhs.count + 1)
        for i in 1...lhs.count {
            current[0] = i
            var rowMinimum = current[0]
            for j in 1...rhs.count {
                let cost = lhs[i - 1] == rhs[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, lhs[i - 1] == rhs[j - 2], lhs[i - 2] == rhs[j - 1] {
                    value = min(value, previousPrevious[j - 2] + 1)
                }
                current[j] = value
                rowMinimum = min(rowMinimum, value)
            }
            if rowMinimum > limit { return limit + 1 }
            (previousPrevious, previous, current) = (previous, current, previousPrevious)
        }
        return previous[rhs.count]
    }
}
