public import GroupPolicy
import GroupPolicyBasics

/// The capability changes between two versions of a policy, over the scenario space of both
/// (the DocC article "The scenario space", with every value either version names).
///
/// Each ``Row`` is a class of scenarios in which one capability is added or removed: the minimal
/// scenarios where the change shows (a scenario that only extends another one with the same
/// change, by more role entries or more entitlements, is left out), with a dimension shown as any
/// value (`nil`) when every value of it gives the same row.
///
/// The diff is complete: the two versions give every group of every response and context the same
/// capabilities exactly when ``rows`` is empty. Why the reduced enumeration suffices: if a
/// capability c is removed in a scenario, either the new version does not grant c there, and the
/// old version's granting entry alone (with its rule's entitlements) still shows the change, or
/// the new version denies c, and the old granting entry plus the new denying entry (with both
/// rules' entitlements) still show it; added is symmetric. So every minimal differing scenario has
/// at most two role entries and an entitlement set made of at most two rules' lists.
public struct PolicyDiff: Sendable {
    /// Whether a capability appears or disappears.
    public struct Change: Sendable, Hashable, Comparable, CustomStringConvertible {
        private let added: Bool
        private init(added: Bool) { self.added = added }

        /// The new version grants the capability where the old one did not.
        public static let added = Change(added: true)
        /// The old version granted the capability where the new one does not.
        public static let removed = Change(added: false)

        /// `added` or `removed`.
        public var description: String { added ? "added" : "removed" }

        /// Added before removed.
        public static func < (lhs: Change, rhs: Change) -> Bool { lhs.added && !rhs.added }
    }

    /// One role entry of a row's scenarios; `nil` stands for any value.
    public struct EntryPattern: Sendable, Hashable {
        /// The entry's product id as the response sends it, or `nil` for any product.
        public var productID: String?
        /// The entry's role, or `nil` for any role.
        public var role: String?

        /// Creates a pattern.
        public init(productID: String?, role: String?) {
            self.productID = productID
            self.role = role
        }
    }

    /// One class of scenarios in which one capability is added or removed; `nil` stands for any
    /// value of a dimension.
    public struct Row: Sendable, Hashable {
        /// Added or removed.
        public var change: Change
        /// The capability.
        public var capability: String
        /// The environment, or `nil` for both.
        public var environment: StoreEnvironment?
        /// The group's type, or `nil` for any type (any type that has role entries, when
        /// ``roles`` is not empty).
        public var groupType: String?
        /// The group's id, or `nil` for any id.
        public var groupID: String?
        /// The group's role entries, exactly (at most one per product).
        public var roles: [EntryPattern]
        /// The entitlements of the context, exactly.
        public var entitlements: [String]
        /// One concrete scenario of the class.
        public var example: Scenario
    }

    /// The capability changes, ordered by capability, then added before removed, then scenario.
    public let rows: [Row]
    /// How many scenarios were evaluated for the capability changes (each under both versions).
    public let scenarioCount: Int
    /// The workspace membership changes, ordered by workspace, then memberships gained, roles
    /// changed and memberships lost, then scenario.
    public let workspaceRows: [WorkspaceRow]
    /// How many scenarios were evaluated for the workspace changes (each under both versions):
    /// only the workspaces defined differently are compared, so 0 when none is.
    public let workspaceScenarioCount: Int
    /// The verdict of each capability whose answer changes in some scenario (``Verdict``), in
    /// capability order; every other capability is ``Verdict/equivalent``.
    public let capabilityVerdicts: [(capability: String, verdict: Verdict)]
    /// The verdict of each workspace whose memberships change in some scenario, in workspace
    /// order; every other workspace is ``Verdict/equivalent``.
    public let workspaceVerdicts: [(workspace: String, verdict: Verdict)]
    /// The values that stand for any value neither version names: group type, group id, role, and
    /// the two products.
    public let unnamedGroupType: String
    /// The group id that stands for any id neither version names.
    public let unnamedGroupID: String
    /// The role that stands for any role neither version names.
    public let unnamedRole: String
    /// Two products neither version names (a change can need two such products).
    public let unnamedProductIDs: [String]

    /// The most scenarios a diff evaluates unless told otherwise: ten million.
    ///
    /// Scenarios are not all alike: the diff also refuses, before evaluating any, when its
    /// scenarios would cost more than 1,000,000,000 rule checks (each scenario weighted by the rules
    /// it can meet), and stops when it finds more than 2,000,000 minimal changes; see the DocC
    /// article "Limits and failure semantics".
    public static let defaultBudget = 10_000_000

    /// Compares two versions of a policy (or policy set).
    ///
    /// - Parameters:
    ///   - old: The version before the change.
    ///   - new: The version after the change.
    ///   - budget: The most scenarios to evaluate.
    /// - Throws: A `GroupPolicyError` with code `overBudget` when the space holds more scenarios
    ///   (or groups to visit) than `budget`; with code `limitExceeded` when its scenarios would cost
    ///   more rule checks than the work limit, when it is over a limit of its own size, or when
    ///   there are more minimal changes than the change limit. The message names the limit.
    public init(from old: Policy, to new: Policy, budget: Int = PolicyDiff.defaultBudget) throws(GroupPolicyError) {
        let differ = PolicyDiffer(
            old: old,
            new: new,
            maximumCandidates: min(budget, ScenarioSpace.maximumCandidates),
            scenarioBudget: budget
        )
        if let refusal = differ.refusal {
            throw GroupPolicyError(code: refusal.overBudget ? .overBudget : .limitExceeded, message: refusal.message)
        }
        let count = differ.scenarioCount
        guard count <= budget else {
            throw GroupPolicyError(
                code: .overBudget,
                message: "the diff's scenario space holds \(count) scenarios, over the budget of \(budget)"
            )
        }
        let workLimit = ScenarioWork.limit
        guard differ.work <= workLimit else {
            throw GroupPolicyError(
                code: .limitExceeded,
                message: "the diff's \(count) scenarios would cost about \(differ.work) rule checks, "
                    + "over the work limit of \(workLimit)"
            )
        }
        let workspaces = WorkspaceDiffer(old: old, new: new, space: differ.space)
        guard workspaces.scenarioCount <= budget else {
            throw GroupPolicyError(
                code: .overBudget,
                message: "the diff's workspace scenario space holds \(workspaces.scenarioCount) scenarios, "
                    + "over the budget of \(budget)"
            )
        }
        let work = saturatingSum(differ.work, workspaces.work)
        guard work <= workLimit else {
            throw GroupPolicyError(
                code: .limitExceeded,
                message: "the diff's \(count) scenarios and \(workspaces.scenarioCount) workspace scenarios would "
                    + "cost about \(work) rule checks, over the work limit of \(workLimit)"
            )
        }
        let merger = PolicyDiffMerger(space: differ.space)
        // Rows of different capabilities or changes never merge: each group is merged on its own,
        // so only one capability's unmerged rows are held at a time.
        rows = try differ.rows(merging: merger.merge)
        scenarioCount = count
        workspaceRows = try workspaces.rows(merging: merger.merge)
        workspaceScenarioCount = workspaces.scenarioCount
        capabilityVerdicts = Self.capabilityVerdicts(of: rows)
        workspaceVerdicts = Self.workspaceVerdicts(of: workspaceRows)
        unnamedGroupType = differ.space.freshGroupType
        unnamedGroupID = differ.space.freshGroupID
        unnamedRole = differ.space.freshRole
        unnamedProductIDs = differ.space.freshProductIDs
    }
}

extension PolicyDiff.Row: ScenarioClassRow {
    /// The capability, then `+` (added, sorted first) or `-`.
    var subject: [String] { [capability, change == .added ? "+" : "-"] }
}
