import GroupPolicy
import GroupPolicyBasics

/// One environment's part of a diff's enumeration: its frames (a group type and a group id) and
/// the sets of role entries to visit in each.
struct DiffPlan {
    var environment: StoreEnvironment
    var candidates: [ScenarioSpace.Candidate]
    var groupTypes: [String]
    var groupIDs: [String]
    var selection: EntrySelection

    /// A `CONSUMER` group has no role entries.
    func entries(forType index: Int) -> EntrySelection {
        groupTypes[index] == GroupType.consumer.rawValue ? .emptyOnly : selection
    }

    /// Scenarios per group id and entitlement set, summed over the types (each type's entry sets
    /// counted once).
    var scenariosPerGroupID: Int {
        let selectionCount = selection.count(candidates)
        return groupTypes.indices.reduce(0) { total, index in
            saturatingSum(total, groupTypes[index] == GroupType.consumer.rawValue ? 1 : selectionCount)
        }
    }

    /// How many scenarios the plan visits over `setCount` entitlement sets.
    func scenarioCount(entitlementSets setCount: Int) -> Int {
        saturatingProduct(scenariosPerGroupID, groupIDs.count, setCount)
    }

    /// What they cost: each scenario evaluated under both versions (their estimates `old` and
    /// `new`), plus `perScenario` rule checks of the comparison.
    func work(entitlementSets setCount: Int, old: ScenarioWork, new: ScenarioWork, perScenario: Int) -> Int {
        let idCost = saturatingSum(
            saturatingSum(old.cost(groupIDs: groupIDs), new.cost(groupIDs: groupIDs)),
            saturatingProduct(perScenario, groupIDs.count)
        )
        return saturatingProduct(scenariosPerGroupID, idCost, setCount)
    }

    /// The scenarios of one entitlement set and one frame (a group type and a group id), which
    /// differ only in their role entries.
    ///
    /// Made once per frame, not per scenario: a diff visits millions of scenarios, and copying
    /// the context and the names into each cost a sixth of the enumeration.
    struct Visit {
        var setIndex: Int
        var context: EvaluationContext
        var groupType: GroupType
        var groupID: String
        /// The frame's position: type index times the number of ids, plus the id's index.
        var frame: Int
    }

    /// Calls `body` with each scenario, for each entitlement set (in order), group type, group id
    /// and entry set (indices into ``candidates``, ascending), until it returns `false`.
    ///
    /// - Returns: `false` when `body` stopped the enumeration.
    @discardableResult
    func forEachScenario(entitlementSets: [[String]], _ body: (Visit, [Int]) -> Bool) -> Bool {
        for (setIndex, entitlements) in entitlementSets.enumerated() {
            let context = EvaluationContext(environment: environment, entitlements: Set(entitlements))
            for (typeIndex, groupType) in groupTypes.enumerated() {
                let type = GroupType(groupType)
                let selection = entries(forType: typeIndex)
                for (idIndex, groupID) in groupIDs.enumerated() {
                    let visit = Visit(
                        setIndex: setIndex,
                        context: context,
                        groupType: type,
                        groupID: groupID,
                        frame: typeIndex * groupIDs.count + idIndex
                    )
                    let finished = selection.forEach(candidates) { indices in body(visit, indices) }
                    guard finished else { return false }
                }
            }
        }
        return true
    }

    /// A kept scenario as a row's coordinates: its group type and id, its role entries, its
    /// entitlements, and the scenario itself as the row's example.
    func coordinates(
        of key: MinimalChanges.Key,
        entitlementSets: [[String]]
    ) -> (
        groupType: String, groupID: String, roles: [PolicyDiff.EntryPattern], entitlements: [String], example: Scenario
    ) {
        let frame = Int(key.frame)
        let groupType = groupTypes[frame / groupIDs.count]
        let groupID = groupIDs[frame % groupIDs.count]
        let roles = key.entries.map { candidates[$0].entry }
        let entitlements = entitlementSets[Int(key.entitlements)]
        return (
            groupType,
            groupID,
            roles.map { PolicyDiff.EntryPattern(productID: $0.productID, role: $0.role.rawValue) },
            entitlements,
            Scenario(
                environment: environment,
                groupID: groupID,
                groupType: GroupType(groupType),
                roles: roles,
                entitlements: entitlements
            )
        )
    }

    /// The kept scenarios as rows: `row` makes one from a code, an environment and a scenario's
    /// coordinates, and each code's rows go through `merge` on their own (so only one code's
    /// unmerged rows are held at a time).
    static func rows<Row>(
        of changes: [(code: Int32, keys: [MinimalChanges.Key])],
        in plans: [DiffPlan],
        entitlementSets: [[String]],
        merging merge: ([Row]) -> [Row],
        _ row: (
            _ code: Int32,
            _ environment: StoreEnvironment,
            _ scenario: (
                groupType: String, groupID: String, roles: [PolicyDiff.EntryPattern], entitlements: [String],
                example: Scenario
            )
        ) -> Row
    ) -> [Row] {
        var rows: [Row] = []
        for (code, keys) in changes {
            rows += merge(
                keys.map { key in
                    let plan = plans[Int(key.plan)]
                    return row(code, plan.environment, plan.coordinates(of: key, entitlementSets: entitlementSets))
                }
            )
        }
        return rows
    }
}

/// A diff's plans, one per environment, with the scenarios they visit and their estimated work
/// summed (saturating): the estimate a diff checks against its budget before it enumerates.
struct DiffPlans {
    let entitlementSets: Int
    let old: ScenarioWork
    let new: ScenarioWork
    /// The work of one scenario beyond evaluating it under each version.
    let perScenario: Int
    private(set) var plans: [DiffPlan] = []
    private(set) var scenarioCount = 0
    private(set) var work = 0

    init(entitlementSets: Int, old: ScenarioWork, new: ScenarioWork, perScenario: Int) {
        self.entitlementSets = entitlementSets
        self.old = old
        self.new = new
        self.perScenario = perScenario
    }

    /// Adds `plan`, its scenarios and its work.
    mutating func append(_ plan: DiffPlan) {
        scenarioCount = saturatingSum(scenarioCount, plan.scenarioCount(entitlementSets: entitlementSets))
        work = saturatingSum(
            work,
            plan.work(entitlementSets: entitlementSets, old: old, new: new, perScenario: perScenario)
        )
        plans.append(plan)
    }
}
