package import GroupPolicyBasics

/// Validates a policy file against the v1 format and builds its ``PolicyDocument``.
///
/// Implements the DocC article "Policy file format" (with its section "Load-time validation").
/// Every problem becomes a diagnostic with a location; a document is returned only when there is no
/// error.
struct PolicyParser {
    static let format = "group-policy/v1"

    let collector: DiagnosticCollector
    let limits: PolicyLimits
    /// Declared capability names, for checking references.
    var declared: [String: CapabilityKind] = [:]

    /// The set's files before this one, or `nil` for a policy of one file.
    let earlier: PolicySetTotals?

    private init(source: SourceText, limits: PolicyLimits, earlier: PolicySetTotals?) {
        self.collector = DiagnosticCollector(
            source: source,
            maximumListedValues: limits.maximumListedNames,
            alreadyListed: earlier?.listedNames ?? 0,
            scope: earlier == nil ? "one policy" : "one policy set"
        )
        self.limits = limits
        self.earlier = earlier
    }

    /// Parses and validates the file of a policy of one file.
    ///
    /// The diagnostics are sorted, errors first.
    static func parse(
        bytes: [UInt8],
        fileName: String?,
        limits: PolicyLimits
    ) -> (document: PolicyDocument?, diagnostics: [Diagnostic]) {
        var single: PolicySetTotals? = nil
        return parse(bytes: bytes, fileName: fileName, limits: limits, earlier: &single)
    }

    /// Parses and validates one file.
    ///
    /// - Parameters:
    ///   - bytes: The file's content.
    ///   - fileName: The name diagnostics print.
    ///   - limits: The bounds, for this file or, with `earlier`, for its set.
    ///   - earlier: For a file of a policy set, what the set's earlier files hold: the limits bound
    ///     the set as a whole, and this file's totals are added to it.
    /// - Returns: The document (`nil` on any error) and the diagnostics, sorted, errors first.
    static func parse(
        bytes: [UInt8],
        fileName: String?,
        limits: PolicyLimits,
        earlier: inout PolicySetTotals?
    ) -> (document: PolicyDocument?, diagnostics: [Diagnostic]) {
        var parser = PolicyParser(
            source: SourceText(fileName: fileName, bytes: bytes),
            limits: limits,
            earlier: earlier
        )
        let document = parser.parseDocument()
        if earlier != nil {
            earlier?.listedNames = parser.collector.listedValueCount
            earlier?.rules += document?.rules.count ?? 0
            earlier?.workspaces += document?.workspaces.count ?? 0
            earlier?.invariants += document?.invariants.count ?? 0
        }
        let diagnostics = parser.collector.sortedDiagnostics
        guard let document, !parser.collector.hasErrors else { return (nil, diagnostics) }
        var loaded = document
        loaded.warnings = diagnostics
        return (loaded, diagnostics)
    }

    // MARK: Document

    private mutating func parseDocument() -> PolicyDocument? {
        guard let root = readJSON(collector, limits: limits) else { return nil }
        let path = JSONPath.root
        let keys = Keys.document
        guard let fields = collector.object(root, path, allowed: keys) else { return nil }

        if let node = fields.required("format"), let format = collector.string(node, path.appending("format")),
            format != Self.format
        {
            collector.error(
                .invalidValue,
                at: node.offset,
                path.appending("format"),
                "unsupported format '\(format)' (expected '\(Self.format)')"
            )
        }
        var id = ""
        var idOffset = root.offset
        if let node = fields.required("id"), let value = collector.string(node, path.appending("id")) {
            id = value
            idOffset = node.offset
            if !Self.isValidPolicyID(value) {
                collector.error(
                    .invalidValue,
                    at: node.offset,
                    path.appending("id"),
                    "invalid policy id '\(value)' (1-128 characters of A-Z a-z 0-9 . _ -)"
                )
            }
        }
        let description = fields.optionalString("description")
        var capabilities =
            fields.required("capabilities").map { parseCapabilities($0, path.appending("capabilities")) } ?? []
        for capability in capabilities { declared[capability.name] = capability.kind }

        var rules: [RuleDefinition] = []
        if let node = fields.required("rules") {
            rules = parseRules(node, path.appending("rules"))
        }
        var workspaces = fields["workspaces"].map { parseWorkspaces($0, path.appending("workspaces")) } ?? []
        let aliases = fields["sandbox"].map { parseSandbox($0, path.appending("sandbox")) } ?? [:]
        var invariants = fields["invariants"].map { parseInvariants($0, path.appending("invariants")) } ?? []

        guard !collector.hasErrors else { return nil }
        // One pass locates every rule, workspace, invariant and capability, for the tools that
        // point at them.
        let locations = collector.source.locations(
            ofOffsets: rules.map(\.offset) + workspaces.map(\.offset) + invariants.map(\.offset)
                + capabilities.map(\.offset)
        )
        for index in rules.indices { rules[index].location = locations[index] }
        for index in workspaces.indices { workspaces[index].location = locations[rules.count + index] }
        for index in invariants.indices {
            invariants[index].location = locations[rules.count + workspaces.count + index]
        }
        let declarationsStart = rules.count + workspaces.count + invariants.count
        for index in capabilities.indices { capabilities[index].location = locations[declarationsStart + index] }
        let document = PolicyDocument(
            fileName: collector.source.fileName,
            id: id,
            idOffset: idOffset,
            description: description,
            capabilities: capabilities,
            rules: rules,
            workspaces: workspaces,
            productAliases: aliases,
            invariants: invariants,
            warnings: []
        )
        PolicyWarnings.check(document, rootOffset: root.offset, rulesNode: fields["rules"], collector: collector)
        return document
    }

    static func isValidPolicyID(_ id: String) -> Bool {
        let count = id.utf8.count
        return count >= 1 && count <= 128 && id.utf8.allSatisfy(isNameByte)
    }

    static func isValidCapabilityName(_ name: String) -> Bool {
        guard let first = name.utf8.first, isLetter(first), name.utf8.count <= 128 else { return false }
        return name.utf8.allSatisfy(isNameByte)
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    /// The definitions of a section that lists objects with ids, in order, or none after a located
    /// error when it is not an array or lists more than the section's limit (with the ones of the
    /// policy set's earlier files).
    ///
    /// Each element must be an object with only the section's keys and a unique `id`; `definition` makes the
    /// element's definition from its path, its node, its fields and its id (`nil` after a located
    /// error, when the element still gets its other fields checked and no definition).
    func sectionDefinitions<Definition>(
        _ section: Section,
        of node: JSONNode,
        _ path: JSONPath,
        _ definition: (
            _ path: JSONPath,
            _ element: JSONNode,
            _ fields: ObjectFields,
            _ id: (value: String, offset: Int)?
        ) -> Definition?
    ) -> [Definition] {
        guard case .array(let elements) = node.value else {
            collector.error(
                .wrongType,
                at: node.offset,
                path,
                "expected an array of \(section.name), found \(node.value.typeName)"
            )
            return []
        }
        let maximum = limits[keyPath: section.maximum]
        let earlierCount = earlier?[keyPath: section.earlier]
        guard within(maximum, elements.count, earlier: earlierCount, section.name, node, path) else { return [] }
        var definitions: [Definition] = []
        var seen: [String: Int] = [:]
        for (index, element) in elements.enumerated() {
            let elementPath = path.appending(index)
            guard let fields = collector.object(element, elementPath, allowed: section.keys) else { continue }
            let id = elementID(
                fields,
                elementPath,
                index: index,
                kind: section.kind,
                section: section.name,
                seen: &seen
            )
            if let made = definition(elementPath, element, fields, id) { definitions.append(made) }
        }
        return definitions
    }

    /// What the three parts of a rule or an invariant's body say, parsed from `fields` at `path`:
    /// the capabilities (required, at least one, each declared), the match (everything when absent)
    /// and the requirements (none when absent).
    func parseClause(
        _ fields: ObjectFields,
        _ path: JSONPath
    ) -> (capabilities: [Located<String>], match: MatchCondition, requires: Requirements) {
        var capabilities: [Located<String>] = []
        if let capabilitiesNode = fields.required("capabilities"),
            let names = collector.stringArray(capabilitiesNode, path.appending("capabilities"), minimumCount: 1)
        {
            capabilities = names
            checkDeclared(names)
        }
        let match = fields["match"].map { parseMatch($0, path.appending("match"), allowsRole: true) } ?? .everything
        return (capabilities, match, parseRequires(fields, path))
    }

    /// The optional `requires` member of `fields` at `path`, or no requirements.
    func parseRequires(_ fields: ObjectFields, _ path: JSONPath) -> Requirements {
        fields["requires"].map { parseRequires($0, path.appending("requires")) } ?? .none
    }

    /// The optional member `key` of `fields` as one of `Value`'s raw values: `nil` when absent, or
    /// after a located error when it is not a string or not one of them (`unknown <name> '<value>'
    /// (expected <expected>)`).
    func rawValue<Value: RawRepresentable<String>>(
        _ fields: ObjectFields,
        _ key: String,
        _ path: JSONPath,
        name: String,
        expected: String
    ) -> Value? {
        guard let node = fields[key], let raw = collector.string(node, path.appending(key)) else { return nil }
        guard let value = Value(rawValue: raw) else {
            collector.error(
                .invalidValue,
                at: node.offset,
                path.appending(key),
                "unknown \(name) '\(raw)' (expected \(expected))"
            )
            return nil
        }
        return value
    }

    /// The required `id` of element `index` of a section, and where it is, with a located error
    /// when an earlier element has it too (`seen`: the section's ids so far, and where each first
    /// appears).
    private func elementID(
        _ fields: ObjectFields,
        _ path: JSONPath,
        index: Int,
        kind: String,
        section: String,
        seen: inout [String: Int]
    ) -> (value: String, offset: Int)? {
        guard let node = fields.required("id"), let value = collector.string(node, path.appending("id")) else {
            return nil
        }
        if let first = seen[value] {
            collector.error(
                .duplicateID,
                at: node.offset,
                path.appending("id"),
                "duplicate \(kind) id '\(value)' (also \(section)[\(first)])"
            )
        } else {
            seen[value] = index
        }
        return (value, node.offset)
    }

    /// Whether a list of `count` items is within `maximum`, with the `earlier` ones of the policy
    /// set's earlier files; if not, the limit error, at the list.
    func within(
        _ maximum: Int,
        _ count: Int,
        earlier: Int?,
        _ noun: String,
        _ node: JSONNode,
        _ path: JSONPath
    ) -> Bool {
        if count > maximum {
            collector.error(.limitExceeded, at: node.offset, path, "\(count) \(noun) is over the limit of \(maximum)")
            return false
        }
        if let earlier, earlier + count > maximum {
            collector.error(
                .limitExceeded,
                at: node.offset,
                path,
                "\(count) \(noun), with the \(earlier) of the policy set's earlier files, is over the limit of "
                    + "\(maximum) per policy set"
            )
            return false
        }
        return true
    }
}

/// Reads a whole file as JSON, reporting size, syntax and encoding problems as diagnostics.
package func readJSON(_ collector: DiagnosticCollector, limits: PolicyLimits) -> JSONNode? {
    let bytes = collector.source.bytes
    guard bytes.count <= limits.maximumBytes else {
        collector.error(
            .limitExceeded,
            at: 0,
            .root,
            "file of \(bytes.count) bytes is over the limit of \(limits.maximumBytes) bytes"
        )
        return nil
    }
    var reader = JSONReader(maximumDepth: limits.maximumDepth)
    do {
        return try reader.parse(bytes)
    } catch {
        collector.error(.invalidJSON, at: error.offset, error.path, "invalid JSON: \(error.message)")
        return nil
    }
}
