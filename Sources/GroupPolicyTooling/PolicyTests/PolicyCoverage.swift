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
    /// The ids of the rules some recorded decision lists (by their bytes: two spellings of an id
    /// are two rules).
    private var exercisedRules: Set<ExactName> = []
    /// The ids of the workspaces some recorded decision lists.
    private var exercisedWorkspaces: Set<ExactName> = []
    /// The distinct decisions of a suite's run already recorded (see ``merge(_:of:into:)``).
    var recordedDecisions: Set<Int> = []

    /// The ids of the rules some recorded decision lists.
    public var exercisedRuleIDs: Set<String> { Set(exercisedRules.map(\.string)) }
    /// The ids of the workspaces some recorded decision lists.
    public var exercisedWorkspaceIDs: Set<String> { Set(exercisedWorkspaces.map(\.string)) }

    /// Starts with nothing exercised.
    ///
    /// - Parameters:
    ///   - policy: The tested policy.
    ///   - policyPath: Its path, for reports.
    public init(policy: Policy, policyPath: String) {
        self.policyPath = policyPath
        var rules: [Item] = []
        var workspaces: [Item] = []
        for (documentIndex, document) in policy.documents.enumerated() {
            let labels = policy.ruleLabels(ofDocument: documentIndex)
            for (index, rule) in document.rules.enumerated() {
                rules.append(
                    Item(id: labels[index], location: rule.location, jsonPath: rule.path.description)
                )
            }
            for workspace in document.workspaces {
                workspaces.append(
                    Item(id: workspace.id, location: workspace.location, jsonPath: workspace.path.description)
                )
            }
        }
        self.rules = rules
        self.workspaces = workspaces
    }

    /// Marks the rules and workspaces `decision` lists as exercised.
    ///
    /// The work is that of the decision's grants, denials and memberships, until every rule (or
    /// every workspace) is exercised: then they are no longer read.
    public mutating func record(_ decision: Decision) {
        ExpectationWork.recordedDecision()
        if exercisedRules.count < rules.count {
            for grant in decision.grants { exercisedRules.insert(ExactName(grant.rule)) }
            for denial in decision.denials { exercisedRules.insert(ExactName(denial.rule)) }
        }
        if exercisedWorkspaces.count < workspaces.count {
            for membership in decision.workspaces { exercisedWorkspaces.insert(ExactName(membership.workspace.id)) }
        }
    }

    /// Records a result's decision, once per distinct decision of its suite's run: cases that share
    /// a response and a context share their decision, and recording it for each of them would
    /// cost cases times its size.
    mutating func record(_ result: PolicyTestResult) {
        if let shared = result.sharedDecision, !recordedDecisions.insert(shared).inserted { return }
        record(result.decision)
    }

    /// The rules no recorded decision lists, in policy order.
    public var unexercisedRules: [Item] { rules.filter { !exercisedRules.contains(ExactName($0.id)) } }

    /// The workspaces no recorded decision lists, in policy order.
    public var unexercisedWorkspaces: [Item] {
        workspaces.filter { !exercisedWorkspaces.contains(ExactName($0.id)) }
    }
}

extension PolicyTestSuite {
    /// The coverage of this file's policy by the given results of its cases.
    ///
    /// - Parameter results: Results of ``run()`` (or of some of its cases).
    /// - Returns: The policy's coverage by those cases alone.
    public func coverage(of results: [PolicyTestResult]) -> PolicyCoverage {
        var coverage = PolicyCoverage(policy: policy, policyPath: policyPath)
        for result in results { coverage.record(result) }
        coverage.recordedDecisions = []
        return coverage
    }
}
