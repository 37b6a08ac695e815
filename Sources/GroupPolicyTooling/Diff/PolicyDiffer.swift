import GroupPolicy

/// Enumerates the reduced scenario space of two policy versions and finds the minimal scenarios in
/// which a capability is added or removed (see ``PolicyDiff`` for why this is complete).
struct PolicyDiffer {
    let old: CompiledPolicy
    let new: CompiledPolicy
    /// Both versions' documents, old ones first.
    let space: ScenarioSpace
    /// Every capability name of either version, sorted.
    let names: [String]
    private let oldToUnion: [Int]
    private let newToUnion: [Int]
    /// Entitlement sets to enumerate, smaller first.
    let entitlementSets: [[String]]
    private let plans: [Plan]
    /// Whether the frames (group types x group ids, per environment) alone were over the budget.
    private let tooManyFrames: Bool

    /// One environment's frames (group type and id) and the entry sets to visit in each.
    private struct Plan {
        var environment: StoreEnvironment
        var candidates: [ScenarioSpace.Candidate]
        var frames: [(groupType: String, groupID: String, entries: EntrySelection)]
    }

    /// - Parameters:
    ///   - old: The version before the change.
    ///   - new: The version after the change.
    ///   - maximumCandidates: The scenario budget: a space whose role entries alone exceed it is
    ///     not built, and ``scenarioCount`` reports their number.
    init(old: CompiledPolicy, new: CompiledPolicy, maximumCandidates: Int = Int.max) {
        self.old = old
        self.new = new
        let documents = old.documents.map(\.document) + new.documents.map(\.document)
        space = ScenarioSpace(documents: documents, maximumCandidates: maximumCandidates)
        names = Set(old.catalog.names + new.catalog.names).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var unionIndex: [String: Int] = [:]
        for (index, name) in names.enumerated() { unionIndex[name] = index }
        oldToUnion = old.catalog.names.map { unionIndex[$0] ?? 0 }
        newToUnion = new.catalog.names.map { unionIndex[$0] ?? 0 }

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
        // with the distinct lists rather than with grants x denies.
        var sets: Set<[String]> = [[]]
        for side in 0..<2 {
            var denyEntitlements: [String: Set<[String]>] = [:]
            for deny in denies[1 - side] {
                let entitlements = Set(deny.rule.requires.entitlements).sorted()
                for capability in Set(deny.rule.capabilities) {
                    denyEntitlements[capability, default: []].insert(entitlements)
                }
            }
            for grant in grants[side] {
                sets.insert(Set(grant.rule.requires.entitlements).sorted())
                var paired: Set<[String]> = []
                for capability in Set(grant.rule.capabilities) {
                    paired.formUnion(denyEntitlements[capability] ?? [])
                }
                for entitlements in paired {
                    sets.insert(Set(grant.rule.requires.entitlements + entitlements).sorted())
                }
            }
        }
        entitlementSets = sets.sorted(by: smallerFirst)

        var plans: [Plan] = []
        let allGrants = (grants[0] + grants[1]).map { ($0.document, $0.rule.match) }
        let allDenies = (denies[0] + denies[1]).map { ($0.document, $0.rule.match) }
        // Every frame visits at least the scenario without entries: too many frames are over any
        // budget by themselves, and are not built.
        let frameCount = saturatingProduct(space.groupTypes.count, space.groupIDs.count, 2)
        tooManyFrames = frameCount > maximumCandidates
        for environment in StoreEnvironment.allCases where !space.isOverLimit && !tooManyFrames {
            let granting = space.candidates(matching: allGrants, in: environment)
            let denying = space.candidates(matching: allDenies, in: environment)
            let selection = EntrySelection(
                includesEmpty: true,
                singles: granting.union(denying),
                pairFirst: granting,
                pairSecond: denying
            )
            var frames: [(String, String, EntrySelection)] = []
            for groupType in space.groupTypes {
                for groupID in space.groupIDs(in: environment) {
                    frames.append(
                        (groupType, groupID, groupType == GroupType.consumer.rawValue ? .emptyOnly : selection)
                    )
                }
            }
            plans.append(Plan(environment: environment, candidates: space.candidates(in: environment), frames: frames))
        }
        self.plans = plans
    }

    /// How many scenarios the enumeration visits.
    var scenarioCount: Int {
        guard !space.isOverLimit else { return space.candidateCount }
        guard !tooManyFrames else { return saturatingProduct(space.groupTypes.count, space.groupIDs.count, 2) }
        var total = 0
        for plan in plans {
            let perSet = plan.frames.reduce(0) { saturatingSum($0, $1.entries.count(plan.candidates)) }
            total = saturatingSum(total, saturatingProduct(perSet, entitlementSets.count))
        }
        return total
    }

    /// A differing scenario, by its coordinates in the enumeration.
    private struct Key: Hashable {
        var plan: Int
        var frame: Int
        var entries: [Int]
        var entitlements: Int
    }

    /// The minimal differing scenarios, one row each, not yet merged.
    func minimalRows() -> [PolicyDiff.Row] {
        var oldEvaluator = ScenarioEvaluator(policy: old)
        var newEvaluator = ScenarioEvaluator(policy: new)
        // For each (capability, added?) the scenarios that show it, in enumeration order.
        var found: [Int: [Key]] = [:]
        var oldBits = [Bool](repeating: false, count: names.count)
        var newBits = [Bool](repeating: false, count: names.count)
        for (planIndex, plan) in plans.enumerated() {
            for (setIndex, entitlements) in entitlementSets.enumerated() {
                let context = EvaluationContext(environment: plan.environment, entitlements: Set(entitlements))
                for (frameIndex, frame) in plan.frames.enumerated() {
                    let type = GroupType(frame.groupType)
                    frame.entries.forEach(plan.candidates) { indices in
                        let roles = indices.map { plan.candidates[$0].entry }
                        oldEvaluator.evaluate(
                            groupID: frame.groupID,
                            groupType: type,
                            roles: roles,
                            context: context
                        )
                        newEvaluator.evaluate(
                            groupID: frame.groupID,
                            groupType: type,
                            roles: roles,
                            context: context
                        )
                        guard
                            oldEvaluator.capabilities != newEvaluator.capabilities || names.count != oldToUnion.count
                                || names.count != newToUnion.count
                        else { return true }
                        for index in names.indices {
                            oldBits[index] = false
                            newBits[index] = false
                        }
                        for (local, union) in oldToUnion.enumerated() where oldEvaluator.has(local) {
                            oldBits[union] = true
                        }
                        for (local, union) in newToUnion.enumerated() where newEvaluator.has(local) {
                            newBits[union] = true
                        }
                        let key = Key(plan: planIndex, frame: frameIndex, entries: indices, entitlements: setIndex)
                        for index in names.indices where oldBits[index] != newBits[index] {
                            found[index * 2 + (newBits[index] ? 0 : 1), default: []].append(key)
                        }
                        return true
                    }
                }
            }
        }

        // Entitlement sets contained in each set (itself included).
        let subsets = entitlementSets.map { superset in
            entitlementSets.indices.filter { Set(entitlementSets[$0]).isSubset(of: superset) }
        }
        var rows: [PolicyDiff.Row] = []
        for (code, keys) in found.sorted(by: { $0.key < $1.key }) {
            let present = Set(keys)
            for key in keys {
                // Left out when a smaller scenario (fewer entries or entitlements) shows the same change.
                let entrySubsets = Self.subsets(of: key.entries)
                let extendsAnother = entrySubsets.contains { entries in
                    subsets[key.entitlements].contains { set in
                        (entries != key.entries || set != key.entitlements)
                            && present.contains(
                                Key(plan: key.plan, frame: key.frame, entries: entries, entitlements: set)
                            )
                    }
                }
                guard !extendsAnother else { continue }
                let plan = plans[key.plan]
                let frame = plan.frames[key.frame]
                let roles = key.entries.map { plan.candidates[$0].entry }
                rows.append(
                    PolicyDiff.Row(
                        change: code % 2 == 0 ? .added : .removed,
                        capability: names[code / 2],
                        environment: plan.environment,
                        groupType: frame.groupType,
                        groupID: frame.groupID,
                        roles: roles.map { PolicyDiff.EntryPattern(productID: $0.productID, role: $0.role.rawValue) },
                        entitlements: entitlementSets[key.entitlements],
                        example: Scenario(
                            environment: plan.environment,
                            groupID: frame.groupID,
                            groupType: GroupType(frame.groupType),
                            roles: roles,
                            entitlements: entitlementSets[key.entitlements]
                        )
                    )
                )
            }
        }
        return rows
    }

    /// Every subset of a set of at most two entries, the set itself included.
    private static func subsets(of entries: [Int]) -> [[Int]] {
        switch entries.count {
        case 0: [[]]
        case 1: [[], entries]
        default: [[], [entries[0]], [entries[1]], entries]
        }
    }
}
