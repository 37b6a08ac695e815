public import GroupPolicy
import GroupPolicyBasics

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
    ///
    /// Names are compared by their bytes, as the engine compares them. A list of what the decision
    /// holds shows its first names and says how many it leaves out (`… and 9990 more`), so a line
    /// stays short however large the decision.
    public func failures(for decision: Decision) -> [String] {
        failures(against: DecisionFacts(decision))
    }

    /// The failures, reading the decision through `facts`, which cases sharing the decision share:
    /// the work is that of this expectation, not of the decision.
    func failures(against facts: DecisionFacts) -> [String] {
        var failures: [String] = []
        if let capabilities {
            let customer = facts.capabilities
            let expected = capabilities.sortedUniqueExactly()
            let difference = Self.difference(
                expected,
                count: customer.count,
                contains: { facts.capabilitySet.contains(ExactName($0)) },
                firstOthers: { excluded, wanted in DecisionFacts.first(wanted, of: customer, notIn: excluded) }
            )
            if let difference {
                failures.append(
                    "capabilities: expected \(FailureList.text(expected)), got "
                        + FailureList.text(customer, total: customer.count) + difference
                )
            }
        }
        for name in includes where !facts.capabilitySet.contains(ExactName(name)) {
            let customer = facts.capabilities
            failures.append(
                "includes: expected '\(name)' to be granted, got \(FailureList.text(customer, total: customer.count))"
            )
        }
        for name in excludes where facts.capabilitySet.contains(ExactName(name)) {
            var because = ""
            if let reasons = facts.grantReasons[ExactName(name)] {
                let left = reasons.count - reasons.first.count
                because =
                    " (granted by \(reasons.first.joined(separator: ", "))\(left > 0 ? ", … and \(left) more" : ""))"
            }
            failures.append("excludes: expected '\(name)' not to be granted, but it is\(because)")
        }
        for (groupID, capabilities) in groups {
            let expected = capabilities.sortedUniqueExactly()
            guard let position = facts.groups.byID[ExactName(groupID)] else {
                let ids = facts.groups.list.lazy.map(\.groupID)
                failures.append(
                    "groups[\"\(groupID)\"]: expected \(FailureList.text(expected)), but the response has no group "
                        + "'\(groupID)' (it has \(FailureList.text(ids, total: facts.groups.list.count)))"
                )
                continue
            }
            let granted = facts.groups.list[position].capabilities
            let difference = Self.difference(
                expected,
                count: granted.count,
                contains: { granted.contains(Capability($0)) },
                firstOthers: { excluded, wanted in facts.names(ofGroup: position, notIn: excluded, first: wanted) }
            )
            if let difference {
                let shown = facts.names(ofGroup: position, notIn: [], first: FailureList.maximumNames + 1)
                failures.append(
                    "groups[\"\(groupID)\"]: expected \(FailureList.text(expected)), got "
                        + FailureList.text(shown, total: granted.count) + difference
                )
            }
        }
        if let workspaces {
            let expected = workspaces.map(DecisionFacts.describe).sorted()
            let actual = facts.workspaces
            if expected.count != actual.count || !zip(expected, actual).allSatisfy({ $0.isExactly($1) }) {
                failures.append(
                    "workspaces: expected \(FailureList.text(expected, quoted: false)), got "
                        + FailureList.text(actual, total: actual.count, quoted: false)
                )
            }
        }
        return failures
    }

    /// ` (missing [...]; unexpected [...])` when the sorted, distinct `expected` names are not
    /// exactly the `count` actual ones; `nil` when they are.
    ///
    /// The work is that of `expected`: membership is asked name by name, and `firstOthers` gives
    /// the first actual names outside a set, only as many as the failure shows.
    private static func difference(
        _ expected: [String],
        count: Int,
        contains: (String) -> Bool,
        firstOthers: (_ excluded: Set<ExactName>, _ wanted: Int) -> [String]
    ) -> String? {
        let missing = expected.filter { !contains($0) }
        let unexpectedCount = count - (expected.count - missing.count)
        guard !missing.isEmpty || unexpectedCount > 0 else { return nil }
        var parts: [String] = []
        if !missing.isEmpty { parts.append("missing \(FailureList.text(missing))") }
        if unexpectedCount > 0 {
            let unexpected = firstOthers(Set(expected.map(ExactName.init)), FailureList.maximumNames + 1)
            parts.append("unexpected \(FailureList.text(unexpected, total: unexpectedCount))")
        }
        return " (" + parts.joined(separator: "; ") + ")"
    }
}
