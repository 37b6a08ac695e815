/// Validates a policy file against the v1 format and builds its ``PolicyDocument``.
///
/// Implements the DocC article "Policy file format" (with its section "Load-time validation").
/// Every problem becomes a diagnostic with a location; a document is returned only when there is no
/// error.
struct PolicyParser {
    static let format = "group-policy/v1"

    private let collector: DiagnosticCollector
    private let limits: PolicyLimits
    /// Declared capability names, for checking references.
    private var declared: [String: CapabilityKind] = [:]

    /// The set's files before this one, or `nil` for a policy of one file.
    private let earlier: PolicySetTotals?

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
        let capabilities =
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
        // One pass locates every rule, workspace and invariant, for the tools that point at them.
        let locations = collector.source.locations(
            ofOffsets: rules.map(\.offset) + workspaces.map(\.offset) + invariants.map(\.offset)
        )
        for index in rules.indices { rules[index].location = locations[index] }
        for index in workspaces.indices { workspaces[index].location = locations[rules.count + index] }
        for index in invariants.indices {
            invariants[index].location = locations[rules.count + workspaces.count + index]
        }
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

    // MARK: Capabilities

    private func parseCapabilities(_ node: JSONNode, _ path: JSONPath) -> [CapabilityDeclaration] {
        guard case .object(let members) = node.value else {
            collector.error(.wrongType, at: node.offset, path, "expected an object, found \(node.value.typeName)")
            return []
        }
        if members.isEmpty {
            collector.error(.invalidValue, at: node.offset, path, "declare at least one capability")
            return []
        }
        if members.count > limits.maximumCapabilities {
            collector.error(
                .limitExceeded,
                at: node.offset,
                path,
                "\(members.count) capabilities is over the limit of \(limits.maximumCapabilities)"
            )
            return []
        }
        var declarations: [CapabilityDeclaration] = []
        for member in members {
            let memberPath = path.appending(member.key)
            if !Self.isValidCapabilityName(member.key) {
                collector.error(
                    .invalidValue,
                    at: member.keyOffset,
                    memberPath,
                    "invalid capability name '\(member.key)' (a letter, then up to 127 of A-Z a-z 0-9 . _ -)"
                )
            }
            var kind = CapabilityKind.presentation
            var description: String?
            switch member.value.value {
            case .string(let text):
                description = text
            case .object:
                guard let fields = collector.object(member.value, memberPath, allowed: Keys.capability) else {
                    continue
                }
                description = fields.optionalString("description")
                if let kindNode = fields["kind"], let raw = collector.string(kindNode, memberPath.appending("kind")) {
                    if let parsed = CapabilityKind(rawValue: raw) {
                        kind = parsed
                    } else {
                        collector.error(
                            .invalidValue,
                            at: kindNode.offset,
                            memberPath.appending("kind"),
                            "unknown capability kind '\(raw)' (expected 'presentation' or 'content')"
                        )
                    }
                }
            default:
                collector.error(
                    .wrongType,
                    at: member.value.offset,
                    memberPath,
                    "expected a description string or an object, found \(member.value.value.typeName)"
                )
            }
            declarations.append(
                CapabilityDeclaration(name: member.key, description: description, kind: kind, offset: member.keyOffset)
            )
        }
        return declarations
    }

    /// Checks that every name is declared, suggesting the closest declared name for a typo.
    private func checkDeclared(_ names: [Located<String>]) {
        for name in names where declared[name.value] == nil {
            let suggestion =
                Suggestion.closest(
                    to: name.value,
                    among: collector.suggestions.sortedCandidates(declared.keys),
                    budget: collector.suggestions
                )
                .map { " (did you mean '\($0)'?)" } ?? ""
            collector.error(
                .undeclaredCapability,
                at: name.offset,
                name.path,
                "undeclared capability '\(name.value)'\(suggestion)"
            )
        }
    }

    /// Whether a list of `count` items is within `maximum`, with the `earlier` ones of the policy
    /// set's earlier files; if not, the limit error, at the list.
    private func within(
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

    // MARK: Rules

    private func parseRules(_ node: JSONNode, _ path: JSONPath) -> [RuleDefinition] {
        guard case .array(let elements) = node.value else {
            collector.error(
                .wrongType,
                at: node.offset,
                path,
                "expected an array of rules, found \(node.value.typeName)"
            )
            return []
        }
        guard within(limits.maximumRules, elements.count, earlier: earlier?.rules, "rules", node, path) else {
            return []
        }
        var rules: [RuleDefinition] = []
        var seen: [String: Int] = [:]
        for (index, element) in elements.enumerated() {
            let rulePath = path.appending(index)
            let keys = Keys.rule
            guard let fields = collector.object(element, rulePath, allowed: keys) else { continue }
            var id: String?
            if let idNode = fields.required("id"), let value = collector.string(idNode, rulePath.appending("id")) {
                id = value
                if let first = seen[value] {
                    collector.error(
                        .duplicateID,
                        at: idNode.offset,
                        rulePath.appending("id"),
                        "duplicate rule id '\(value)' (also rules[\(first)])"
                    )
                } else {
                    seen[value] = index
                }
            }
            let description = fields.optionalString("description")
            var effect = RuleEffect.grant
            if let effectNode = fields["effect"], let raw = collector.string(effectNode, rulePath.appending("effect")) {
                if let parsed = RuleEffect(rawValue: raw) {
                    effect = parsed
                } else {
                    collector.error(
                        .invalidValue,
                        at: effectNode.offset,
                        rulePath.appending("effect"),
                        "unknown effect '\(raw)' (expected 'grant' or 'deny')"
                    )
                }
            }
            var capabilities: [Located<String>] = []
            if let capabilitiesNode = fields.required("capabilities"),
                let names = collector.stringArray(capabilitiesNode, rulePath.appending("capabilities"), minimumCount: 1)
            {
                capabilities = names
                checkDeclared(names)
            }
            let match =
                fields["match"].map { parseMatch($0, rulePath.appending("match"), allowsRole: true) } ?? .everything
            let requires = fields["requires"].map { parseRequires($0, rulePath.appending("requires")) } ?? .none
            if effect == .grant, requires.entitlements.isEmpty {
                for name in capabilities where declared[name.value] == .content {
                    collector.error(
                        .contentWithoutEntitlements,
                        at: name.offset,
                        name.path,
                        "content capability '\(name.value)' granted without requires.entitlements (membership is not entitlement)"
                    )
                }
            }
            guard let id else { continue }
            rules.append(
                RuleDefinition(
                    id: id,
                    description: description,
                    effect: effect,
                    capabilities: capabilities.map(\.value),
                    match: match,
                    requires: requires,
                    offset: element.offset,
                    path: rulePath
                )
            )
        }
        return rules
    }

    // MARK: Match and requires

    private func parseMatch(_ node: JSONNode, _ path: JSONPath, allowsRole: Bool) -> MatchCondition {
        let keys = Keys.match
        // `role` is a known key even for workspaces, so that it gets its own clear error below.
        guard let fields = collector.object(node, path, allowed: keys) else {
            return .everything
        }
        var match = MatchCondition()
        match.groupTypes = fields["groupType"].flatMap { condition($0, path.appending("groupType"), .groupType) }
        match.groupIDs = fields["groupId"].flatMap { condition($0, path.appending("groupId"), .groupID) }
        match.productIDs = fields["productId"].flatMap { condition($0, path.appending("productId"), .productID) }
        if let roleNode = fields["role"] {
            if allowsRole {
                match.roles = condition(roleNode, path.appending("role"), .role)
            } else {
                collector.error(
                    .roleInWorkspaceMatch,
                    at: roleNode.offset,
                    path.appending("role"),
                    "a workspace match cannot use 'role' (use adminRoles to say who administers it)"
                )
            }
        }
        return match
    }

    private enum Attribute {
        case groupType, groupID, productID, role
    }

    /// A string or non-empty array of strings.
    ///
    /// For `productId` and `role`, `"*"` (alone or in the list) is any value. `groupType` and `role`
    /// values this version does not know are warned about.
    private func condition(_ node: JSONNode, _ path: JSONPath, _ attribute: Attribute) -> ValueCondition? {
        guard let values = collector.stringOrArray(node, path) else { return nil }
        switch attribute {
        case .productID, .role:
            if values.contains(where: { $0.value == "*" }) { return .any }
        case .groupType, .groupID:
            break
        }
        for value in values {
            switch attribute {
            case .groupType: warnIfUnknown(groupType: value)
            case .role: warnIfUnknown(role: value)
            case .groupID, .productID: break
            }
        }
        return .oneOf(Self.unique(values.map(\.value)))
    }

    /// The values in first-seen order without repeats, compared by their bytes (two spellings
    /// `String` calls equal are two values; see ``Swift/String/isExactly(_:)``), in linear time: a
    /// match may list thousands.
    private static func unique(_ values: [String]) -> [String] {
        // Most lists hold one value or a few: compare those in place, without hashing copies.
        guard values.count > 8 else {
            guard values.count > 1 else { return values }
            var result: [String] = []
            result.reserveCapacity(values.count)
            for value in values where !result.contains(where: { $0.isExactly(value) }) { result.append(value) }
            return result
        }
        // By bytes, without a copy of each value (lists of millions of names are within the limits).
        var seen = ByteInterner()
        return values.filter { value in
            let before = seen.count
            _ = seen.insert(value)
            return seen.count > before
        }
    }

    private func warnIfUnknown(groupType value: Located<String>) {
        guard !GroupType(rawValue: value.value).isKnown else { return }
        let hint =
            value.value == "*"
            ? "'*' is not a wildcard for groupType (omit groupType to match every group)"
            : "groupType '\(value.value)' is not one this version knows (ORGANIZATION, CONSUMER); it matches only groups of exactly that type"
        collector.warning(.unknownEnumValue, at: value.offset, value.path, hint)
    }

    private func warnIfUnknown(role value: Located<String>) {
        guard !Role(rawValue: value.value).isKnown else { return }
        collector.warning(
            .unknownEnumValue,
            at: value.offset,
            value.path,
            "role '\(value.value)' is not one this version knows (ADMIN, NONE); it matches only entries with exactly that role"
        )
    }

    private func parseRequires(_ node: JSONNode, _ path: JSONPath) -> Requirements {
        guard let fields = collector.object(node, path, allowed: Keys.requires) else { return .none }
        var requires = Requirements()
        if let environmentNode = fields["environment"],
            let values = collector.stringOrArray(environmentNode, path.appending("environment"))
        {
            var environments: Set<StoreEnvironment> = []
            for value in values {
                if let environment = StoreEnvironment(rawValue: value.value) {
                    environments.insert(environment)
                } else {
                    collector.error(
                        .invalidValue,
                        at: value.offset,
                        value.path,
                        "unknown environment '\(value.value)' (expected 'Production' or 'Sandbox')"
                    )
                }
            }
            requires.environments = environments
        }
        if let entitlementsNode = fields["entitlements"],
            let values = collector.stringArray(entitlementsNode, path.appending("entitlements"), minimumCount: 1)
        {
            requires.entitlements = Self.unique(values.map(\.value))
        }
        return requires
    }

    // MARK: Workspaces

    private func parseWorkspaces(_ node: JSONNode, _ path: JSONPath) -> [WorkspaceDefinition] {
        guard case .array(let elements) = node.value else {
            collector.error(
                .wrongType,
                at: node.offset,
                path,
                "expected an array of workspaces, found \(node.value.typeName)"
            )
            return []
        }
        guard within(limits.maximumWorkspaces, elements.count, earlier: earlier?.workspaces, "workspaces", node, path)
        else { return [] }
        var workspaces: [WorkspaceDefinition] = []
        var seen: [String: Int] = [:]
        for (index, element) in elements.enumerated() {
            let workspacePath = path.appending(index)
            let keys = Keys.workspace
            guard let fields = collector.object(element, workspacePath, allowed: keys) else { continue }
            var id: String?
            var idOffset = element.offset
            if let idNode = fields.required("id"), let value = collector.string(idNode, workspacePath.appending("id")) {
                id = value
                idOffset = idNode.offset
                if let first = seen[value] {
                    collector.error(
                        .duplicateID,
                        at: idNode.offset,
                        workspacePath.appending("id"),
                        "duplicate workspace id '\(value)' (also workspaces[\(first)])"
                    )
                } else {
                    seen[value] = index
                }
            }
            let description = fields.optionalString("description")
            let match =
                fields["match"].map { parseMatch($0, workspacePath.appending("match"), allowsRole: false) }
                ?? .everything
            var adminRoles = [Role.admin.rawValue]
            if let rolesNode = fields["adminRoles"],
                let values = collector.stringArray(rolesNode, workspacePath.appending("adminRoles"))
            {
                adminRoles = values.map(\.value)
                values.forEach(warnIfUnknown(role:))
            }
            let requires = fields["requires"].map { parseRequires($0, workspacePath.appending("requires")) } ?? .none
            guard let id else { continue }
            workspaces.append(
                WorkspaceDefinition(
                    id: id,
                    description: description,
                    match: match,
                    adminRoles: adminRoles,
                    requires: requires,
                    offset: element.offset,
                    path: workspacePath,
                    idOffset: idOffset
                )
            )
        }
        return workspaces
    }

    // MARK: Sandbox

    private func parseSandbox(_ node: JSONNode, _ path: JSONPath) -> [String: String] {
        guard let fields = collector.object(node, path, allowed: Keys.sandbox) else { return [:] }
        guard let aliasesNode = fields["productAliases"] else { return [:] }
        let aliasesPath = path.appending("productAliases")
        guard case .object(let members) = aliasesNode.value else {
            collector.error(
                .wrongType,
                at: aliasesNode.offset,
                aliasesPath,
                "expected an object of product id to product id, found \(aliasesNode.value.typeName)"
            )
            return [:]
        }
        // An alias is two names.
        let counted = collector.countListedValues(
            2 * members.count,
            at: { members[$0 / 2].value.offset },
            { aliasesPath.appending(members[$0 / 2].key) }
        )
        guard counted else { return [:] }
        var aliases: [String: String] = [:]
        for member in members {
            if let target = collector.string(member.value, aliasesPath.appending(member.key)) {
                aliases[member.key] = target
            }
        }
        return aliases
    }

    // MARK: Invariants

    private func parseInvariants(_ node: JSONNode, _ path: JSONPath) -> [InvariantDefinition] {
        guard case .array(let elements) = node.value else {
            collector.error(
                .wrongType,
                at: node.offset,
                path,
                "expected an array of invariants, found \(node.value.typeName)"
            )
            return []
        }
        guard within(limits.maximumInvariants, elements.count, earlier: earlier?.invariants, "invariants", node, path)
        else { return [] }
        var invariants: [InvariantDefinition] = []
        var seen: [String: Int] = [:]
        for (index, element) in elements.enumerated() {
            let invariantPath = path.appending(index)
            guard
                let fields = collector.object(
                    element,
                    invariantPath,
                    allowed: Keys.invariant
                )
            else {
                continue
            }
            var id: String?
            if let idNode = fields.required("id"), let value = collector.string(idNode, invariantPath.appending("id")) {
                id = value
                if let first = seen[value] {
                    collector.error(
                        .duplicateID,
                        at: idNode.offset,
                        invariantPath.appending("id"),
                        "duplicate invariant id '\(value)' (also invariants[\(first)])"
                    )
                } else {
                    seen[value] = index
                }
            }
            let description = fields.optionalString("description")
            let never = fields["never"]
            let always = fields["always"]
            let quantifier: InvariantDefinition.Quantifier
            let bodyNode: JSONNode
            switch (never, always) {
            case (let node?, nil):
                quantifier = .never
                bodyNode = node
            case (nil, let node?):
                quantifier = .always
                bodyNode = node
            case (.some, .some(let node)):
                collector.error(
                    .invalidValue,
                    at: node.offset,
                    invariantPath.appending("always"),
                    "an invariant has exactly one of 'never' and 'always', not both"
                )
                continue
            case (nil, nil):
                collector.error(
                    .missingKey,
                    at: element.offset,
                    invariantPath.appending("never"),
                    "missing required key: an invariant needs one of 'never' or 'always'"
                )
                continue
            }
            let bodyPath = invariantPath.appending(quantifier.rawValue)
            guard let body = collector.object(bodyNode, bodyPath, allowed: Keys.invariantBody) else {
                continue
            }
            var capabilities: [String] = []
            if let capabilitiesNode = body.required("capabilities"),
                let names = collector.stringArray(capabilitiesNode, bodyPath.appending("capabilities"), minimumCount: 1)
            {
                capabilities = names.map(\.value)
                checkDeclared(names)
            }
            let match =
                body["match"].map { parseMatch($0, bodyPath.appending("match"), allowsRole: true) } ?? .everything
            let requires = body["requires"].map { parseRequires($0, bodyPath.appending("requires")) } ?? .none
            guard let id else { continue }
            invariants.append(
                InvariantDefinition(
                    id: id,
                    description: description,
                    quantifier: quantifier,
                    capabilities: capabilities,
                    match: match,
                    requires: requires,
                    offset: element.offset,
                    path: invariantPath
                )
            )
        }
        return invariants
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
