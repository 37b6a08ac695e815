import GroupPolicy
import GroupPolicyBasics

/// Validates a test file strictly and loads what it references.
enum PolicyTestParser {
    struct Parsed {
        var policyPath: String
        var policy: Policy
        var cases: [PolicyTestCase]
        var responseFilesRead: Int
    }

    /// Parses a test file and loads what it names; its policy through `loader` when one is given
    /// (a command's, which bounds what the command reads), or directly; its response files as
    /// `access` allows (the loader's, when there is one).
    static func parse(
        _ source: SourceText,
        limits: PolicyLimits,
        loader: PolicyLoader? = nil,
        access: ResponseFileAccess = ResponseFileAccess()
    ) -> (suite: Parsed?, diagnostics: [Diagnostic]) {
        let collector = DiagnosticCollector(source: source)
        let suite = parse(collector, limits: limits, loader: loader, access: loader?.responseFileAccess ?? access)
        let diagnostics = collector.sortedDiagnostics
        return (diagnostics.contains { $0.severity == .error } ? nil : suite, diagnostics)
    }

    private static func parse(
        _ collector: DiagnosticCollector,
        limits: PolicyLimits,
        loader: PolicyLoader?,
        access: ResponseFileAccess
    ) -> Parsed? {
        guard let root = readJSON(collector, limits: limits),
            let fields = collector.object(root, .root, allowed: Keys.document)
        else { return nil }
        if let node = fields.required("format"), let format = collector.string(node, JSONPath.root.appending("format")),
            format != PolicyTestSuite.format
        {
            collector.error(
                .invalidValue,
                at: node.offset,
                JSONPath.root.appending("format"),
                "unsupported format '\(format)' (expected '\(PolicyTestSuite.format)')"
            )
        }
        var policy: Policy?
        var policyPath = ""
        if let node = fields.required("policy"),
            let relative = collector.string(node, JSONPath.root.appending("policy"))
        {
            policyPath = resolve(relative, against: collector.source.fileName)
            do throws(GroupPolicyError) {
                if let loader {
                    policy = try loader.policy(at: policyPath)
                } else {
                    policy = try Policy(contentsOf: policyPath, limits: limits)
                }
            } catch {
                collector.error(
                    error.code == .limitExceeded ? .limitExceeded : .unreadableFile,
                    at: node.offset,
                    JSONPath.root.appending("policy"),
                    "policy '\(policyPath)' does not load: \(error.diagnostics.isEmpty ? error.message : "\(error.diagnostics.filter { $0.severity == .error }.count) error(s), first: \(error.description.split(separator: "\n").first ?? "")")"
                )
            }
        }
        var cases: [PolicyTestCase] = []
        var responseFiles = ResponseFileCache(testFile: collector.source.fileName, access: access)
        if let node = fields.required("cases") {
            cases = parseCases(node, policy: policy, collector: collector, responseFiles: &responseFiles)
            checkEvaluationWork(of: cases, at: node, collector: collector)
        }
        guard let policy else { return nil }
        return Parsed(
            policyPath: policyPath,
            policy: policy,
            cases: cases,
            responseFilesRead: responseFiles.filesRead
        )
    }

    private static func parseCases(
        _ node: JSONNode,
        policy: Policy?,
        collector: DiagnosticCollector,
        responseFiles: inout ResponseFileCache
    ) -> [PolicyTestCase] {
        let path = JSONPath.root.appending("cases")
        guard case .array(let elements) = node.value else {
            collector.error(
                .wrongType,
                at: node.offset,
                path,
                "expected an array of cases, found \(node.value.typeName)"
            )
            return []
        }
        var cases: [PolicyTestCase] = []
        // Case names and capabilities by their bytes: two spellings of a name are two names.
        var seen: [ExactName: Int] = [:]
        // Built once: every expectation checks its names against it.
        let declared = policy.map { policy in
            (exact: Set(policy.capabilities.map { ExactName($0.name) }), names: policy.capabilities.map(\.name))
        }
        for (index, element) in elements.enumerated() {
            let casePath = path.appending(index)
            let keys = Keys.testCase
            guard let fields = collector.object(element, casePath, allowed: keys) else { continue }
            var name: String?
            if let nameNode = fields.required("name"),
                let value = collector.string(nameNode, casePath.appending("name"))
            {
                name = value
                if let first = seen[ExactName(value)] {
                    collector.error(
                        .duplicateID,
                        at: nameNode.offset,
                        casePath.appending("name"),
                        "duplicate case name '\(value)' (also cases[\(first)])"
                    )
                } else {
                    seen[ExactName(value)] = index
                }
            }
            let context =
                fields["context"].map { parseContext($0, casePath.appending("context"), collector) }
                ?? EvaluationContext()
            let response = parseResponse(fields, element, casePath, collector: collector, responseFiles: &responseFiles)
            let expectation = fields.required("expect").flatMap {
                parseExpectation(
                    $0,
                    casePath.appending("expect"),
                    policy: policy,
                    declared: declared,
                    collector: collector
                )
            }
            guard let name, let response, let expectation else { continue }
            cases.append(
                PolicyTestCase(
                    name: name,
                    context: context,
                    response: response,
                    expectation: expectation,
                    location: collector.source.location(ofOffset: element.offset)
                )
            )
        }
        return cases
    }

    /// The most groups and role entries one test file's cases may have evaluated, each distinct
    /// response and context once: 2,000,000, some twenty times what 32 MiB of inline responses
    /// hold against one context each, a second or two of work.
    static let maximumEvaluatedEntries = 2_000_000

    /// Refuses cases that would evaluate more than the limit of groups and role entries.
    ///
    /// Cases sharing one response file with a context each are evaluated one by one: each context
    /// costs the whole response (a 1 MiB response holds 20,000 groups and role entries, so 20,000
    /// contexts would be 400 million). Counted before anything is evaluated, and refused naming
    /// the limit.
    private static func checkEvaluationWork(
        of cases: [PolicyTestCase],
        at node: JSONNode,
        collector: DiagnosticCollector
    ) {
        struct Shared: Hashable {
            var storage: UnsafeRawPointer?
            var count: Int
            var context: EvaluationContext
        }
        var seen: Set<Shared> = []
        var entries = 0
        for testCase in cases {
            let groups = testCase.response.groups
            let key = Shared(
                storage: groups.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) },
                count: groups.count,
                context: testCase.context
            )
            guard seen.insert(key).inserted else { continue }
            entries += groups.count
            for group in groups { entries += group.roles.count }
            guard entries <= maximumEvaluatedEntries else {
                collector.error(
                    .limitExceeded,
                    at: node.offset,
                    JSONPath.root.appending("cases"),
                    "the cases evaluate more than \(maximumEvaluatedEntries) groups and role entries (each distinct "
                        + "response and context once), over the limit of \(maximumEvaluatedEntries); "
                        + "share contexts or split the file"
                )
                return
            }
        }
    }

    private static func parseContext(
        _ node: JSONNode,
        _ path: JSONPath,
        _ collector: DiagnosticCollector
    ) -> EvaluationContext {
        var context = EvaluationContext()
        guard let fields = collector.object(node, path, allowed: Keys.context) else {
            return context
        }
        if let environmentNode = fields["environment"],
            let value = collector.string(environmentNode, path.appending("environment"))
        {
            if let environment = StoreEnvironment(rawValue: value) {
                context.environment = environment
            } else {
                collector.error(
                    .invalidValue,
                    at: environmentNode.offset,
                    path.appending("environment"),
                    "unknown environment '\(value)' (expected 'Production' or 'Sandbox')"
                )
            }
        }
        if let entitlementsNode = fields["entitlements"],
            let values = collector.stringArray(entitlementsNode, path.appending("entitlements"))
        {
            context.entitlements = Set(values.map(\.value))
        }
        return context
    }

    /// The case's response: inline (`response`) or from a file (`responseFile`), exactly one.
    private static func parseResponse(
        _ fields: ObjectFields,
        _ caseNode: JSONNode,
        _ casePath: JSONPath,
        collector: DiagnosticCollector,
        responseFiles: inout ResponseFileCache
    ) -> GetCustomerGroupsResponse? {
        switch (fields["response"], fields["responseFile"]) {
        case (let node?, nil):
            return collector.customerGroupsResponse(node, casePath.appending("response"))
        case (nil, let node?):
            guard let relative = collector.string(node, casePath.appending("responseFile")) else { return nil }
            let responsePath = resolve(relative, against: collector.source.fileName)
            switch responseFiles.response(at: responsePath) {
            case .success(let response):
                return response
            case .failure(.refused(let line)):
                collector.error(.unreadableFile, at: node.offset, casePath.appending("responseFile"), line)
                return nil
            case .failure(.failed(let error)):
                collector.error(
                    error.code == .limitExceeded ? .limitExceeded : .unreadableFile,
                    at: node.offset,
                    casePath.appending("responseFile"),
                    "response file '\(responsePath)' does not load: \(error)"
                )
                return nil
            }
        case (.some, .some(let node)):
            collector.error(
                .invalidValue,
                at: node.offset,
                casePath.appending("responseFile"),
                "give either 'response' or 'responseFile', not both"
            )
            return nil
        case (nil, nil):
            collector.error(
                .missingKey,
                at: caseNode.offset,
                casePath.appending("response"),
                "missing required key 'response' (or 'responseFile')"
            )
            return nil
        }
    }

    private static func parseExpectation(
        _ node: JSONNode,
        _ path: JSONPath,
        policy: Policy?,
        declared: (exact: Set<ExactName>, names: [String])?,
        collector: DiagnosticCollector
    ) -> PolicyTestExpectation? {
        let keys = Keys.expect
        guard let fields = collector.object(node, path, allowed: keys) else { return nil }
        guard node.value != .object([]) else {
            collector.error(
                .invalidValue,
                at: node.offset,
                path,
                "expect needs at least one of \(keys.joined(separator: ", "))"
            )
            return nil
        }
        func names(_ key: String) -> [String]? {
            guard let valueNode = fields[key], let values = collector.stringArray(valueNode, path.appending(key)) else {
                return nil
            }
            checkDeclared(values, declared: declared, collector: collector)
            return values.map(\.value)
        }
        var expectation = PolicyTestExpectation()
        expectation.capabilities = names("capabilities")
        expectation.includes = names("includes") ?? []
        expectation.excludes = names("excludes") ?? []
        if let groupsNode = fields["groups"] {
            if case .object(let members) = groupsNode.value {
                for member in members {
                    let memberPath = path.appending("groups").appending(member.key)
                    if let values = collector.stringArray(member.value, memberPath) {
                        checkDeclared(values, declared: declared, collector: collector)
                        expectation.groups.append((member.key, values.map(\.value)))
                    }
                }
            } else {
                collector.error(
                    .wrongType,
                    at: groupsNode.offset,
                    path.appending("groups"),
                    "expected an object of group id to capabilities, found \(groupsNode.value.typeName)"
                )
            }
        }
        if let workspacesNode = fields["workspaces"] {
            expectation.workspaces = parseWorkspaces(
                workspacesNode,
                path.appending("workspaces"),
                policy: policy,
                collector: collector
            )
        }
        return expectation
    }

    private static func parseWorkspaces(
        _ node: JSONNode,
        _ path: JSONPath,
        policy: Policy?,
        collector: DiagnosticCollector
    ) -> [WorkspaceMembership] {
        guard case .array(let elements) = node.value else {
            collector.error(
                .wrongType,
                at: node.offset,
                path,
                "expected an array of workspace memberships, found \(node.value.typeName)"
            )
            return []
        }
        let defined = policy.map { $0.workspaces.map(\.id) }
        let definedExactly = defined.map { Set($0.map(ExactName.init)) }
        var memberships: [WorkspaceMembership] = []
        for (index, element) in elements.enumerated() {
            let elementPath = path.appending(index)
            guard let fields = collector.object(element, elementPath, allowed: Keys.membership) else {
                continue
            }
            let workspaceNode = fields.required("workspace")
            let workspace = workspaceNode.flatMap { collector.string($0, elementPath.appending("workspace")) }
            let groupID = fields.required("groupId").flatMap { collector.string($0, elementPath.appending("groupId")) }
            let roleNode = fields.required("role")
            let rawRole = roleNode.flatMap { collector.string($0, elementPath.appending("role")) }
            var role: WorkspaceMembership.Role?
            if let rawRole, let roleNode {
                role = WorkspaceMembership.Role(rawValue: rawRole)
                if role == nil {
                    collector.error(
                        .invalidValue,
                        at: roleNode.offset,
                        elementPath.appending("role"),
                        "unknown workspace role '\(rawRole)' (expected 'admin' or 'member')"
                    )
                }
            }
            if let workspace, let workspaceNode, let defined, let definedExactly,
                !definedExactly.contains(ExactName(workspace))
            {
                let suggestion =
                    Suggestion.closest(to: workspace, among: defined).map { " (did you mean '\($0)'?)" } ?? ""
                collector.error(
                    .invalidValue,
                    at: workspaceNode.offset,
                    elementPath.appending("workspace"),
                    "the policy defines no workspace '\(workspace)'\(suggestion)"
                )
            }
            if let workspace, let groupID, let role {
                memberships.append(WorkspaceMembership(workspace: Workspace(workspace), groupID: groupID, role: role))
            }
        }
        return memberships
    }

    /// A capability named in an expectation must be declared: a typo in `excludes` would otherwise
    /// pass forever.
    private static func checkDeclared(
        _ names: [Located<String>],
        declared: (exact: Set<ExactName>, names: [String])?,
        collector: DiagnosticCollector
    ) {
        guard let declared else { return }
        for name in names where !declared.exact.contains(ExactName(name.value)) {
            let suggestion =
                Suggestion.closest(
                    to: name.value,
                    among: collector.suggestions.sortedCandidates(declared.names),
                    budget: collector.suggestions
                ).map { " (did you mean '\($0)'?)" } ?? ""
            collector.error(
                .undeclaredCapability,
                at: name.offset,
                name.path,
                "the policy declares no capability '\(name.value)'\(suggestion)"
            )
        }
    }
}

/// Resolves a path written in a file against that file's directory (absolute paths stay).
func resolve(_ relative: String, against file: String?) -> String {
    guard !relative.hasPrefix("/"), let file, let slash = file.lastIndex(of: "/") else { return relative }
    return String(file[...slash]) + relative
}
