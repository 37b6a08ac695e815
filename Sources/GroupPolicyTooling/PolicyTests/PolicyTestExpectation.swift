public import GroupPolicy

/// What a policy test case expects of its decision (`expect` in a `*.tests.json` file).
///
/// Every given part must hold.
public struct PolicyTestExpectation: Sendable, Hashable {
    /// The exact set of the customer's capabilities, if given.
    public var capabilities: [String]?
    /// Capabilities the customer must have (partial).
    public var includes: [String]
    /// Capabilities the customer must not have (partial).
    public var excludes: [String]
    /// For each listed group id, the exact set of that group's capabilities, in file order.
    public var groups: [(groupID: String, capabilities: [String])]
    /// The exact list of workspace memberships (order ignored), if given.
    public var workspaces: [WorkspaceMembership]?

    /// Creates an expectation.
    public init(
        capabilities: [String]? = nil,
        includes: [String] = [],
        excludes: [String] = [],
        groups: [(groupID: String, capabilities: [String])] = [],
        workspaces: [WorkspaceMembership]? = nil
    ) {
        self.capabilities = capabilities
        self.includes = includes
        self.excludes = excludes
        self.groups = groups
        self.workspaces = workspaces
    }

    /// Compares field by field (groups in order).
    public static func == (lhs: PolicyTestExpectation, rhs: PolicyTestExpectation) -> Bool {
        lhs.capabilities == rhs.capabilities && lhs.includes == rhs.includes && lhs.excludes == rhs.excludes
            && lhs.groups.map(\.groupID) == rhs.groups.map(\.groupID)
            && lhs.groups.map(\.capabilities) == rhs.groups.map(\.capabilities) && lhs.workspaces == rhs.workspaces
    }

    /// Hashes the fields.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(capabilities)
        hasher.combine(includes)
        hasher.combine(excludes)
        for group in groups {
            hasher.combine(group.groupID)
            hasher.combine(group.capabilities)
        }
        hasher.combine(workspaces)
    }

    /// Each way `decision` falls short of this expectation, as "what: expected X, got Y" lines;
    /// empty when it holds.
    public func failures(for decision: Decision) -> [String] {
        var failures: [String] = []
        let actual = decision.capabilities.names
        if let capabilities {
            let expected = Self.sortedUnique(capabilities)
            if expected != actual {
                failures.append(
                    "capabilities: expected \(Self.list(expected)), got \(Self.list(actual))\(Self.difference(expected, actual))"
                )
            }
        }
        for name in includes where !decision.capabilities.contains(name) {
            failures.append("includes: expected '\(name)' to be granted, got \(Self.list(actual))")
        }
        for name in excludes where decision.capabilities.contains(name) {
            let rules = decision.grants(of: Capability(name)).map { "'\($0.rule)' in group \($0.groupID)" }
            let because = rules.isEmpty ? "" : " (granted by \(Self.unique(rules).joined(separator: ", ")))"
            failures.append("excludes: expected '\(name)' not to be granted, but it is\(because)")
        }
        for (groupID, capabilities) in groups {
            let expected = Self.sortedUnique(capabilities)
            guard let group = decision.capabilities(inGroup: groupID) else {
                let present = decision.groups.map(\.groupID)
                failures.append(
                    "groups[\"\(groupID)\"]: expected \(Self.list(expected)), but the response has no group '\(groupID)' (it has \(Self.list(present)))"
                )
                continue
            }
            if group.names != expected {
                failures.append(
                    "groups[\"\(groupID)\"]: expected \(Self.list(expected)), got \(Self.list(group.names))\(Self.difference(expected, group.names))"
                )
            }
        }
        if let workspaces {
            let expected = workspaces.map(Self.describe).sorted()
            let actualWorkspaces = decision.workspaces.map(Self.describe).sorted()
            if expected != actualWorkspaces {
                failures.append(
                    "workspaces: expected [\(expected.joined(separator: ", "))], got [\(actualWorkspaces.joined(separator: ", "))]"
                )
            }
        }
        return failures
    }

    private static func describe(_ membership: WorkspaceMembership) -> String {
        "{\"workspace\": \"\(membership.workspace.id)\", \"groupId\": \"\(membership.groupID)\", \"role\": \"\(membership.role.rawValue)\"}"
    }

    private static func sortedUnique(_ names: [String]) -> [String] {
        Array(Set(names)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    private static func unique(_ values: [String]) -> [String] {
        var result: [String] = []
        for value in values where !result.contains(value) { result.append(value) }
        return result
    }

    private static func list(_ names: [String]) -> String {
        "[" + names.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
    }

    private static func difference(_ expected: [String], _ actual: [String]) -> String {
        let missing = expected.filter { !actual.contains($0) }
        let unexpected = actual.filter { !expected.contains($0) }
        var parts: [String] = []
        if !missing.isEmpty { parts.append("missing \(list(missing))") }
        if !unexpected.isEmpty { parts.append("unexpected \(list(unexpected))") }
        return parts.isEmpty ? "" : " (" + parts.joined(separator: "; ") + ")"
    }
}
