package import GroupPolicyBasics

/// Collects diagnostics for one source file while it is validated, turning byte offsets into
/// locations, and offers the typed readers every strict format here shares.
package final class DiagnosticCollector {
    package let source: SourceText
    private(set) var diagnostics: [Diagnostic] = []
    /// The work left for "did you mean" suggestions in this document.
    package let suggestions = SuggestionBudget()

    /// The most values the file's lists may hold together (``stringArray(_:_:minimumCount:)``,
    /// ``stringOrArray(_:_:)`` and what ``countListedValues(_:at:_:)`` counts); `nil`: no bound.
    private let maximumListedValues: Int?
    /// How many such values were read so far.
    private var listedValues = 0
    /// Whether the limit was reached; every list read after it is refused without a word.
    private(set) var isOverListedValues = false

    /// What the limit bounds, for its message: `one policy`, or `one policy set`.
    private let listedValuesScope: String

    /// Creates a collector for one file.
    ///
    /// - Parameters:
    ///   - source: The file.
    ///   - maximumListedValues: The most values its lists may hold; `nil`: no bound.
    ///   - alreadyListed: Values listed before this file, by the other files of its set.
    ///   - scope: What the bound is for, as its message says it (`one policy`, `one policy set`).
    package init(
        source: SourceText,
        maximumListedValues: Int? = nil,
        alreadyListed: Int = 0,
        scope: String = "one policy"
    ) {
        self.source = source
        self.maximumListedValues = maximumListedValues
        self.listedValues = alreadyListed
        self.listedValuesScope = scope
    }

    /// How many values the lists held (with those listed before this file).
    var listedValueCount: Int { listedValues }

    /// Counts `count` more listed values, the first of them at `offset`; `false` once the total is
    /// over the limit (reported once, at the value that crossed it).
    ///
    /// Lists are what a file can make huge in few bytes (a name is five bytes), and what the
    /// compiled tables grow with, so a bound on their values bounds the work after parsing.
    func countListedValues(_ count: Int, at offsets: (Int) -> Int, _ path: (Int) -> JSONPath) -> Bool {
        guard !isOverListedValues else { return false }
        guard let maximum = maximumListedValues, listedValues + count > maximum else {
            listedValues += count
            return true
        }
        let crossing = max(0, maximum - listedValues)
        isOverListedValues = true
        error(
            .limitExceeded,
            at: offsets(crossing),
            path(crossing),
            "more than \(maximum) listed names in \(listedValuesScope) (match values, capabilities, entitlements, "
                + "admin roles and aliases together) is over the limit of \(maximum)"
        )
        return false
    }

    var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

    package func error(_ kind: Diagnostic.Kind, at offset: Int, _ path: JSONPath, _ message: String) {
        add(.error, kind, at: offset, path, message)
    }

    func warning(_ kind: Diagnostic.Kind, at offset: Int, _ path: JSONPath, _ message: String) {
        add(.warning, kind, at: offset, path, message)
    }

    /// The most diagnostics of one kind and severity one file reports: 100.
    ///
    /// The others are counted, and one more diagnostic of that kind says how many were left out and where the
    /// first of them is; so a file listing a million unknown roles costs a hundred lines, not a
    /// million (and not the memory of a million messages).
    static let maximumPerKind = 100

    private struct KindKey: Hashable {
        var severity: Diagnostic.Severity
        var kind: Diagnostic.Kind
    }

    /// Per kind, how many were reported, and where the first one left out is.
    private var reportedByKind: [KindKey: Int] = [:]
    private var omittedByKind: [KindKey: (count: Int, offset: Int, path: JSONPath)] = [:]
    /// The kinds with omissions, in the order their first omission happened.
    private var omittedKinds: [KindKey] = []

    private func add(
        _ severity: Diagnostic.Severity,
        _ kind: Diagnostic.Kind,
        at offset: Int,
        _ path: JSONPath,
        _ message: String
    ) {
        let key = KindKey(severity: severity, kind: kind)
        let reported = reportedByKind[key, default: 0]
        guard reported < Self.maximumPerKind else {
            if let omitted = omittedByKind[key] {
                omittedByKind[key] = (omitted.count + 1, omitted.offset, omitted.path)
            } else {
                omittedByKind[key] = (1, offset, path)
                omittedKinds.append(key)
            }
            return
        }
        reportedByKind[key] = reported + 1
        diagnostics.append(
            Diagnostic(
                severity: severity,
                kind: kind,
                location: source.location(ofOffset: offset),
                jsonPath: path.description,
                message: message
            )
        )
    }

    /// The diagnostics reported, then one per kind that had more than ``maximumPerKind``.
    private var diagnosticsWithOmissions: [Diagnostic] {
        diagnostics
            + omittedKinds.compactMap { key in
                guard let omitted = omittedByKind[key] else { return nil }
                return Diagnostic(
                    severity: key.severity,
                    kind: key.kind,
                    location: source.location(ofOffset: omitted.offset),
                    jsonPath: omitted.path.description,
                    message:
                        "\(omitted.count) more \(key.severity.rawValue)s of kind \(key.kind.rawValue) from here on "
                        + "are not listed (at most \(Self.maximumPerKind) of a kind per file)"
                )
            }
    }

    /// Errors first, then warnings, each in file order.
    package var sortedDiagnostics: [Diagnostic] {
        // Sorts positions by precomputed keys, then copies each diagnostic once: sorting the
        // diagnostics themselves moved and copied every one of them many times (a large policy
        // can have a warning per rule).
        let diagnostics = diagnosticsWithOmissions
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
        guard countListedValues(elements.count, at: { elements[$0].offset }, { path.appending($0) }) else {
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
            guard countListedValues(1, at: { _ in node.offset }, { _ in path }) else { return nil }
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
