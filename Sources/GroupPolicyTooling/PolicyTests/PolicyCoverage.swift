public import GroupPolicy

/// Which rules and workspaces of a policy the cases of its tests exercised.
///
/// A rule is exercised when a case's decision lists it in `Decision.grants` or
/// `Decision.denials` (it contributed a capability, or removed one that would have been
/// granted); a workspace when a decision lists a membership in it. Record the decisions of every
/// case that tests the policy, across test files, then read ``unexercisedRules`` and
/// ``unexercisedWorkspaces``.
public struct PolicyCoverage: Sendable {
    /// A rule or workspace definition: its id and where it is written.
    public struct Item: Sendable, Hashable {
        /// The rule's id as provenance names it (`policy-id/rule-id` in a set of several policies),
        /// or the workspace's id.
        public var id: String
        /// Where the definition starts.
        public var location: SourcePosition?
        /// The definition's JSON path, such as `rules[2]`.
        public var jsonPath: String
    }

    /// The tested policy's path.
    public let policyPath: String
    /// Every rule of the policy (or set), in order.
    public let rules: [Item]
    /// Every workspace definition of the policy (or set), in order.
    public let workspaces: [Item]
    /// The ids of the rules some recorded decision lists.
    public private(set) var exercisedRuleIDs: Set<String> = []
    /// The ids of the workspaces some recorded decision lists.
    public private(set) var exercisedWorkspaceIDs: Set<String> = []

    /// Starts with nothing exercised.
    ///
    /// - Parameters:
    ///   - policy: The tested policy.
    ///   - policyPath: Its path, for reports.
    public init(policy: Policy, policyPath: String) {
        self.policyPath = policyPath
        var rules: [Item] = []
        var workspaces: [Item] = []
        for document in policy.compiled.documents {
            for (index, rule) in document.document.rules.enumerated() {
                rules.append(
                    Item(id: document.ruleLabels[index], location: rule.location, jsonPath: rule.path.description)
                )
            }
            for workspace in document.document.workspaces {
                workspaces.append(
                    Item(id: workspace.id, location: workspace.location, jsonPath: workspace.path.description)
                )
            }
        }
        self.rules = rules
        self.workspaces = workspaces
    }

    /// Marks the rules and workspaces `decision` lists as exercised.
    public mutating func record(_ decision: Decision) {
        for grant in decision.grants { exercisedRuleIDs.insert(grant.rule) }
        for denial in decision.denials { exercisedRuleIDs.insert(denial.rule) }
        for membership in decision.workspaces { exercisedWorkspaceIDs.insert(membership.workspace.id) }
    }

    /// The rules no recorded decision lists, in policy order.
    public var unexercisedRules: [Item] { rules.filter { !exercisedRuleIDs.contains($0.id) } }

    /// The workspaces no recorded decision lists, in policy order.
    public var unexercisedWorkspaces: [Item] { workspaces.filter { !exercisedWorkspaceIDs.contains($0.id) } }
}

extension PolicyTestSuite {
    /// The coverage of this file's policy by the given results of its cases.
    ///
    /// - Parameter results: Results of ``run()`` (or of some of its cases).
    /// - Returns: The policy's coverage by those cases alone.
    public func coverage(of results: [PolicyTestResult]) -> PolicyCoverage {
        var coverage = PolicyCoverage(policy: policy, policyPath: policyPath)
        for result in results { coverage.record(result.decision) }
        return coverage
    }
}
