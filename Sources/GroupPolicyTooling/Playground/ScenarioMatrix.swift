public import GroupPolicy
import GroupPolicyBasics

/// Every single-group scenario of the scenario space against every capability: which the policy
/// grants, and which of those answers changed against the saved version of the policy.
///
/// A row is one group of each type the space enumerates (see the DocC article "The scenario
/// space"), with no role entry or with one role entry per product and role, in one environment
/// with one set of verified entitlements; in `CONSUMER` groups only the row without an entry, as
/// Apple sends none. Both versions are evaluated by the runtime's compiled tables, as invariants
/// and diffs are, over one space built from both, so a value either version names has its rows.
public struct ScenarioMatrix: Sendable {
    /// One scenario and what it is granted.
    public struct Row: Sendable, Hashable {
        /// The group's id: the unnamed id, or one a policy matches literally.
        public var groupID: String
        /// The group's type.
        public var groupType: String
        /// The group's one role entry, if it has one.
        public var entry: RoleEntry?
        /// The capabilities the policy grants the scenario, sorted.
        public var capabilities: [String]
        /// The capabilities whose answer differs from the saved version's, sorted: granted by one
        /// version and not the other (a capability only one version declares counts as not granted
        /// by the other).
        public var changed: [String]
    }

    /// The most rows a matrix holds: 10,000; a larger space is refused rather than shown.
    public static let maximumRows = 10_000

    /// The environment of every scenario.
    public let environment: StoreEnvironment
    /// The entitlements every scenario holds, sorted.
    public let entitlements: [String]
    /// The columns: every capability either version declares, sorted.
    public let capabilities: [String]
    /// The scenarios: by group id, then type (`ORGANIZATION`, `CONSUMER`, other named types, the
    /// unnamed type), then the row without an entry, then each entry by product and role in the
    /// space's order.
    public let rows: [Row]

    /// Evaluates every scenario under `policy`, and under `savedPolicy` to mark what changed.
    ///
    /// - Parameters:
    ///   - policy: The policy as edited.
    ///   - savedPolicy: The policy as saved; `nil` marks nothing.
    ///   - context: The environment and verified entitlements of every scenario.
    /// - Throws: A `GroupPolicyError` with code `overBudget` when the space has more than
    ///   ``maximumRows`` rows.
    public init(policy: Policy, savedPolicy: Policy? = nil, context: EvaluationContext) throws(GroupPolicyError) {
        environment = context.environment
        entitlements = context.entitlements.sorted()
        let saved = savedPolicy ?? policy
        let space = ScenarioSpace(
            documents: policy.documents + saved.documents,
            maximumCandidates: Self.maximumRows
        )
        let candidates = space.candidates(in: context.environment)
        // Without the sandbox placeholder that the space adds in Sandbox: the runtime sets it
        // apart only in Production, so in Sandbox its rows would repeat the unnamed group's.
        let groupIDs = space.groupIDs
        let perGroupID = space.groupTypes.reduce(0) {
            $0 + ($1 == GroupType.consumer.rawValue ? 1 : 1 + candidates.count)
        }
        guard !space.isOverLimit, perGroupID * groupIDs.count <= Self.maximumRows else {
            let count = space.isOverLimit ? "more than \(Self.maximumRows)" : "\(perGroupID * groupIDs.count)"
            throw GroupPolicyError(
                code: .overBudget,
                message: "the scenario matrix has \(count) rows, over the limit of \(Self.maximumRows)"
            )
        }
        capabilities = Set(policy.capabilityNames + saved.capabilityNames).sorted()
        let columns = capabilities.map { (policy.capabilityIndex(of: $0), saved.capabilityIndex(of: $0)) }
        var current = ScenarioEvaluator(policy: policy)
        var before = ScenarioEvaluator(policy: saved)
        var rows: [Row] = []
        for groupID in groupIDs {
            for groupType in space.groupTypes {
                let entries: [[Int]] =
                    groupType == GroupType.consumer.rawValue ? [[]] : [[]] + candidates.indices.map { [$0] }
                for indices in entries {
                    let type = GroupType(rawValue: groupType)
                    current.evaluate(
                        groupID: groupID,
                        groupType: type,
                        entries: indices,
                        of: candidates,
                        context: context
                    )
                    before.evaluate(
                        groupID: groupID,
                        groupType: type,
                        entries: indices,
                        of: candidates,
                        context: context
                    )
                    var row = Row(
                        groupID: groupID,
                        groupType: groupType,
                        entry: indices.first.map { candidates[$0].entry },
                        capabilities: [],
                        changed: []
                    )
                    for (name, (index, savedIndex)) in zip(capabilities, columns) {
                        let granted = index.map(current.has) ?? false
                        if granted { row.capabilities.append(name) }
                        if granted != (savedIndex.map(before.has) ?? false) { row.changed.append(name) }
                    }
                    rows.append(row)
                }
            }
        }
        self.rows = rows
    }

    /// The matrix as JSON: `environment`, `entitlements`, `capabilities` (the columns) and `rows`,
    /// each with `groupId`, `groupType`, `productId` and `role` (`null` without an entry),
    /// `capabilities` and `changed`.
    ///
    /// - Parameter pretty: Pretty with two-space indentation, or compact.
    /// - Returns: The JSON text, without a trailing newline.
    public func jsonString(pretty: Bool = false) -> String {
        var writer = JSONWriter(pretty: pretty, reservingCapacity: 128 * rows.count + 256)
        writer.beginObject()
        writer.member("environment", environment.rawValue)
        writer.member("entitlements", strings: entitlements)
        writer.member("capabilities", strings: capabilities)
        writer.member("rows", objects: rows) { writer, row in
            writer.member("groupId", row.groupID)
            writer.member("groupType", row.groupType)
            writer.member("productId", orNull: row.entry?.productID)
            writer.member("role", orNull: row.entry?.role.rawValue)
            writer.member("capabilities", strings: row.capabilities)
            writer.member("changed", strings: row.changed)
        }
        writer.endObject()
        return writer.string
    }
}
