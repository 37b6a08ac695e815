import GroupPolicy
import GroupPolicyBasics

/// Enumerates the reduced scenario space of two policy versions and finds the minimal scenarios in
/// which a capability is added or removed (see ``PolicyDiff`` for why this is complete).
///
/// Everything that can be large is counted before it is built or enumerated: the entitlement sets,
/// the frames (group types x group ids), the scenarios, and their work (``ScenarioWork``). The
/// minimal changes are kept as they are found (a scenario that extends a kept one is dropped at
/// once, since every smaller scenario comes earlier in the enumeration), compactly, and at most
/// ``maximumChanges`` of them.
struct PolicyDiffer {
    let old: Policy
    let new: Policy
    /// Both versions' documents, old ones first.
    let space: ScenarioSpace
    /// Every capability name of either version, sorted.
    let names: [String]
    private let oldToUnion: [Int]
    private let newToUnion: [Int]
    /// Whether the two catalogs list different names (or in a different order), so that bit sets
    /// are compared through ``names`` rather than directly.
    private let catalogsDiffer: Bool
    /// Entitlement sets to enumerate, smaller first.
    let entitlementSets: [[String]]
    private let plans: [DiffPlan]
    /// How many scenarios the enumeration visits (`Int.max` when ``refusal`` is set).
    let scenarioCount: Int
    /// Why the space was not built, naming the dimension over its limit, and whether that limit
    /// is the caller's scenario budget; `nil` when it was built.
    let refusal: (message: String, overBudget: Bool)?
    /// The estimated rule checks of the enumeration (``ScenarioWork``).
    let work: Int

    /// The most minimal changes (scenario, capability) a diff keeps before merging them into rows:
    /// two million, about 100 MB.
    static let maximumChanges = 2_000_000

    /// The limit in force: ``maximumChanges``, lowered by tests.
    @TaskLocal static var changeLimit = maximumChanges

    /// The most entitlements the diff's entitlement sets may hold together (each set a grant's
    /// entitlements and perhaps a deny's): 10,000,000.
    static let maximumEntitlementMembers = 10_000_000

    /// - Parameters:
    ///   - old: The version before the change.
    ///   - new: The version after the change.
    ///   - maximumCandidates: The most role entries per environment, and entitlement sets, to build.
    ///   - scenarioBudget: The scenario budget: more frames than this are not enumerated.
    ///
    /// A space over one of these is not built, and ``refusal`` says which.
    init(old: Policy, new: Policy, maximumCandidates: Int = Int.max, scenarioBudget: Int = Int.max) {
        self.old = old
        self.new = new
        let documents = old.documents + new.documents
        space = ScenarioSpace(documents: documents, maximumCandidates: maximumCandidates)
        names = (old.capabilities.map(\.name) + new.capabilities.map(\.name)).sortedUniqueExactly()
        var unionIndex: [ExactName: Int] = [:]
        for (index, name) in names.enumerated() { unionIndex[ExactName(name)] = index }
        oldToUnion = old.capabilities.map(\.name).map { unionIndex[ExactName($0)] ?? 0 }
        newToUnion = new.capabilities.map(\.name).map { unionIndex[ExactName($0)] ?? 0 }
        catalogsDiffer = oldToUnion != newToUnion || oldToUnion.count != names.count

        // Rules by side: (document index in the space, rule).
        let oldCount = old.documents.count
        var grants: [[(document: Int, rule: RuleDefinition)]] = [[], []]
        var denies: [[(document: Int, rule: RuleDefinition)]] = [[], []]
        for (index, document) in documents.enumerated() {
            let side = index < oldCount ? 0 : 1
            for rule in document.rules {
                if rule.effect == .grant {
                    grants[side].append((index, rule))
                } else {
                    denies[side].append((index, rule))
                }
            }
        }
        // A change needs a grant of one version, perhaps a deny of the other: their entitlements.
        // Denies are indexed by capability (their distinct entitlement lists), so the work grows
        // with the distinct lists rather than with grants x denies; past the budget the sets stop
        // being collected (each is a scenario at least).
        var sets: Set<[ExactName]> = [[]]
        // The entitlements the unions would copy, counted before any is made (an upper bound: a
        // grant with each deny of each capability it names): the set limit counts sets, not their
        // members, and a million sets of 900 entitlements each are gigabytes.
        var members = 0
        for side in 0..<2 {
            var perCapability: [ExactName: (denies: Int, entitlements: Int)] = [:]
            for deny in denies[1 - side] {
                for capability in Set(deny.rule.capabilities.map(ExactName.init)) {
                    perCapability[capability, default: (0, 0)].denies += 1
                    perCapability[capability, default: (0, 0)].entitlements += deny.rule.requires.entitlements.count
                }
            }
            for grant in grants[side] {
                let own = grant.rule.requires.entitlements.count
                members = saturatingSum(members, own)
                for capability in Set(grant.rule.capabilities.map(ExactName.init)) {
                    guard let paired = perCapability[capability] else { continue }
                    members = saturatingSum(
                        members,
                        saturatingSum(saturatingProduct(own, paired.denies), paired.entitlements)
                    )
                }
            }
        }
        collecting: for side in 0..<2 where members <= Self.maximumEntitlementMembers {
            var denyEntitlements: [ExactName: Set<[ExactName]>] = [:]
            for deny in denies[1 - side] {
                let entitlements = Set(deny.rule.requires.entitlements.map(ExactName.init)).sorted()
                for capability in Set(deny.rule.capabilities.map(ExactName.init)) {
                    denyEntitlements[capability, default: []].insert(entitlements)
                }
            }
            for grant in grants[side] {
                let own = grant.rule.requires.entitlements.map(ExactName.init)
                sets.insert(Set(own).sorted())
                var paired: Set<[ExactName]> = []
                for capability in Set(grant.rule.capabilities.map(ExactName.init)) {
                    paired.formUnion(denyEntitlements[capability] ?? [])
                }
                for entitlements in paired {
                    sets.insert(Set(own + entitlements).sorted())
                }
                if sets.count > maximumCandidates { break collecting }
            }
        }
        let tooManyMembers = members > Self.maximumEntitlementMembers
        let tooManySets = sets.count > maximumCandidates || tooManyMembers
        entitlementSets = tooManySets ? [] : sets.sorted(by: smallerFirst).map { $0.map(\.string) }

        // Every frame visits at least the scenario without entries: frames over the budget are
        // over it by themselves, and are not enumerated.
        let frameCount = saturatingProduct(space.groupTypes.count, space.groupIDs.count, 2)
        var refusal: (message: String, overBudget: Bool)?
        if space.isOverLimit {
            refusal = (
                "the diff's scenario space has \(space.candidateCount) role entries (products x roles) "
                    + "per environment, over the limit of \(maximumCandidates)", false
            )
        } else if tooManyMembers {
            refusal = (
                "the diff's entitlement sets hold more than \(Self.maximumEntitlementMembers) entitlements "
                    + "together, over the limit of \(Self.maximumEntitlementMembers)", false
            )
        } else if tooManySets {
            refusal = (
                "the diff's scenario space has more than \(maximumCandidates) entitlement sets, "
                    + "over the limit of \(maximumCandidates)", false
            )
        } else if frameCount > scenarioBudget {
            refusal = (
                "the diff's scenario space has \(frameCount) groups (group types x group ids x environments), "
                    + "over the budget of \(scenarioBudget) scenarios", true
            )
        }
        self.refusal = refusal
        guard refusal == nil else {
            plans = []
            scenarioCount = Int.max
            work = Int.max
            return
        }

        let allGrants = (grants[0] + grants[1]).map { ($0.document, $0.rule.match) }
        let allDenies = (denies[0] + denies[1]).map { ($0.document, $0.rule.match) }
        let oldWork = ScenarioWork(documents: old.documents, capabilityCount: old.capabilities.count)
        let newWork = ScenarioWork(documents: new.documents, capabilityCount: new.capabilities.count)
        // Comparing through the union of the catalogs visits each set capability.
        var plans = DiffPlans(
            entitlementSets: entitlementSets.count,
            old: oldWork,
            new: newWork,
            perScenario: catalogsDiffer ? names.count : 0
        )
        for environment in StoreEnvironment.allCases {
            let granting = space.candidates(matching: allGrants, in: environment)
            let denying = space.candidates(matching: allDenies, in: environment)
            plans.append(
                DiffPlan(
                    environment: environment,
                    candidates: space.candidates(in: environment),
                    groupTypes: space.groupTypes,
                    groupIDs: space.groupIDs(in: environment),
                    selection: EntrySelection(
                        includesEmpty: true,
                        singles: granting.union(denying),
                        pairFirst: granting,
                        pairSecond: denying
                    )
                )
            )
        }
        self.plans = plans.plans
        scenarioCount = plans.scenarioCount
        // Telling minimal changes apart compares entitlement sets pairwise.
        work = saturatingSum(plans.work, saturatingProduct(entitlementSets.count, entitlementSets.count))
    }

    /// The minimal differing scenarios as rows, each capability's and change's rows passed through
    /// `merge` on their own (so only one group of unmerged rows is held at a time), in capability
    /// order, added before removed.
    ///
    /// - Throws: A `GroupPolicyError` with code `limitExceeded` when more than
    ///   ``maximumChanges`` minimal changes are found.
    func rows(merging merge: ([PolicyDiff.Row]) -> [PolicyDiff.Row]) throws(GroupPolicyError) -> [PolicyDiff.Row] {
        var oldEvaluator = ScenarioEvaluator(policy: old)
        var newEvaluator = ScenarioEvaluator(policy: new)
        var unionBits = [UInt8](repeating: 0, count: names.count)
        var touched: [Int] = []
        // For each code (capability x 2, + 1 when removed), the minimal scenarios.
        let changes = try MinimalChanges.find(
            in: plans,
            entitlementSets: entitlementSets,
            of: "capability"
        ) { plan, scenario, entries, differing in
            oldEvaluator.evaluate(
                groupID: scenario.groupID,
                groupType: scenario.groupType,
                entries: entries,
                of: plan.candidates,
                context: scenario.context
            )
            newEvaluator.evaluate(
                groupID: scenario.groupID,
                groupType: scenario.groupType,
                entries: entries,
                of: plan.candidates,
                context: scenario.context
            )
            if catalogsDiffer {
                // 1: the old version has it, 2: the new one, 3: both. A set's bits are the ones
                // that differ from the empty set.
                CapabilityBits.forEachDifference(.small(0), oldEvaluator.capabilities) { local, _ in
                    let union = oldToUnion[local]
                    if unionBits[union] == 0 { touched.append(union) }
                    unionBits[union] |= 1
                }
                CapabilityBits.forEachDifference(.small(0), newEvaluator.capabilities) { local, _ in
                    let union = newToUnion[local]
                    if unionBits[union] == 0 { touched.append(union) }
                    unionBits[union] |= 2
                }
                touched.sort()
                for union in touched {
                    if unionBits[union] != 3 {
                        differing.append(Int32(union * 2 + (unionBits[union] == 2 ? 0 : 1)))
                    }
                    unionBits[union] = 0
                }
                touched.removeAll(keepingCapacity: true)
            } else if oldEvaluator.capabilities != newEvaluator.capabilities {
                CapabilityBits.forEachDifference(oldEvaluator.capabilities, newEvaluator.capabilities) { local, added in
                    differing.append(Int32(oldToUnion[local] * 2 + (added ? 0 : 1)))
                }
            }
        }

        return DiffPlan.rows(of: changes, in: plans, entitlementSets: entitlementSets, merging: merge) {
            code,
            environment,
            scenario in
            PolicyDiff.Row(
                change: code % 2 == 0 ? .added : .removed,
                capability: names[Int(code / 2)],
                environment: environment,
                groupType: scenario.groupType,
                groupID: scenario.groupID,
                roles: scenario.roles,
                entitlements: scenario.entitlements,
                example: scenario.example
            )
        }
    }
}
