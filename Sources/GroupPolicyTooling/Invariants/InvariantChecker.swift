import GroupPolicy
import GroupPolicyBasics

/// Checks invariants over the reduced scenario space of a compiled policy.
///
/// Why the reduction is exact. Fix a group (its type and id) and an environment. Whether a rule
/// matches is then monotone in the set S of role entries (a role-level rule needs *some* matching
/// entry) and in the entitlements E (`requires.entitlements` needs a subset of E). So the granted
/// and the denied capabilities only grow with S and E, and so does whether the invariant covers
/// the scenario. Take a violating scenario (S, E):
///
/// - `never`, capability c granted and not denied: keep in S only an entry through which the
///   invariant covers it and one through which a grant rule r grants c, and shrink E to the
///   invariant's entitlements plus r's. The scenario is still covered, r still grants c, and
///   denials only shrank: still a violation.
/// - `always`, c not granted: keep only the covering entry and the invariant's entitlements;
///   grants only shrank. c denied by a deny rule d: keep the covering entry and one through which
///   d matches, with the invariant's entitlements plus d's; d still denies c.
///
/// Subsets of valid scenarios are valid (still at most one entry per product). Hence a violation
/// exists exactly when one exists among scenarios with at most two entries (a covering one, and a
/// witness of a rule granting, or denying, a listed capability) and entitlement sets made of the
/// invariant's list and at most one such rule's list. Those are the scenarios enumerated here.
struct InvariantChecker {
    let policy: Policy
    /// The policy's documents, in load order.
    let documents: [PolicyDocument]
    let space: ScenarioSpace
    /// What one scenario costs under the policy.
    let work: ScenarioWork
    /// The rules of each effect that list a capability, by capability: an invariant's witnesses
    /// are found through its own capabilities rather than by scanning every rule.
    private let rulesByCapability: [RuleEffect: [ExactName: [(document: Int, rule: Int)]]]

    /// Builds the scenario space of the policy's documents.
    ///
    /// A space with more role entries than ``ScenarioSpace/maximumCandidates`` is not built (its
    /// invariants are reported over budget), so a policy naming huge numbers of products and roles
    /// costs no memory here; below it, each invariant's reduced space is counted against its
    /// budget, and its work against the work limit, before it is enumerated.
    init(policy: Policy, budget: Int = Int.max, space: ScenarioSpace? = nil) {
        self.policy = policy
        let documents = policy.documents
        self.documents = documents
        self.space = space ?? ScenarioSpace(documents: documents, maximumCandidates: ScenarioSpace.maximumCandidates)
        // A space over the limit evaluates nothing, so its work is not estimated (that walks every
        // name again).
        self.work =
            self.space.isOverLimit
            ? .nothing : ScenarioWork(documents: documents, capabilityCount: policy.capabilities.count)
        var rulesByCapability: [RuleEffect: [ExactName: [(document: Int, rule: Int)]]] = [:]
        for (documentIndex, document) in documents.enumerated() {
            for (ruleIndex, rule) in document.rules.enumerated() {
                for capability in Set(rule.capabilities.map(ExactName.init)) {
                    rulesByCapability[rule.effect, default: [:]][capability, default: []].append(
                        (documentIndex, ruleIndex)
                    )
                }
            }
        }
        self.rulesByCapability = rulesByCapability
    }

    /// The scenarios one invariant needs in one environment: every entitlement set, in every
    /// frame (a group type and a group id), with the entry sets of the frame's type.
    private struct Plan {
        var environment: StoreEnvironment
        var entitlementSets: [[String]]
        var groupTypes: [String]
        var groupIDs: [String]
        var selection: EntrySelection
        var candidates: [ScenarioSpace.Candidate]
        var roleLevel: Bool

        /// The entry sets of a group type (`nil`: the type is not covered).
        func entries(forType groupType: String) -> EntrySelection? {
            guard groupType == GroupType.consumer.rawValue else { return selection }
            // A CONSUMER group has no role entries, so a role-level match never covers it.
            return roleLevel ? nil : .emptyOnly
        }

        /// Scenarios per group id, summed over the types (each entry selection counted once).
        var perGroupID: Int {
            let selectionCount = selection.count(candidates)
            return groupTypes.reduce(0) { total, groupType in
                let entries = entries(forType: groupType)
                let count = entries == nil ? 0 : groupType == GroupType.consumer.rawValue ? 1 : selectionCount
                return saturatingSum(total, count)
            }
        }
    }

    /// Checks one invariant.
    ///
    /// - Parameters:
    ///   - invariant: The invariant.
    ///   - documentIndex: The index of the document that declares it.
    ///   - budget: The most scenarios it may need.
    ///   - workLimit: The most rule checks it may cost (what is left of the check's work limit).
    /// - Returns: Holds, violated (with a counterexample), or over budget (nothing enumerated).
    func check(
        _ invariant: InvariantDefinition,
        document documentIndex: Int,
        budget: Int,
        workLimit: Int = ScenarioWork.limit
    ) -> InvariantResult {
        let document = documents[documentIndex]
        var result = InvariantResult(
            invariantID: invariant.id,
            policyID: document.id,
            location: invariant.location,
            jsonPath: invariant.path.description,
            status: .overBudget,
            scenarioCount: space.candidateCount,
            budget: budget,
            counterexample: nil,
            offendingCapabilities: [],
            quantifier: invariant.quantifier.rawValue
        )
        guard !space.isOverLimit else { return result }
        let listed = invariant.capabilities.compactMap(policy.capabilityIndex(of:))
        // The rules that can witness a violation: grants of a listed capability break `never`,
        // denials of one break `always`.
        let witnessEffect: RuleEffect = invariant.quantifier == .never ? .grant : .deny
        var witnessRules: Set<[Int]> = []
        for capability in Set(invariant.capabilities.map(ExactName.init)) {
            for (witnessDocument, rule) in rulesByCapability[witnessEffect]?[capability] ?? [] {
                witnessRules.insert([witnessDocument, rule])
            }
        }
        let witnesses = witnessRules.sorted { $0.lexicographicallyPrecedes($1) }.map {
            (document: $0[0], rule: documents[$0[0]].rules[$0[1]])
        }
        let own = invariant.requires.entitlements.map(ExactName.init)
        var entitlementSets: Set<[ExactName]> = [Set(own).sorted()]
        for witness in witnesses {
            entitlementSets.insert(Set(own + witness.rule.requires.entitlements.map(ExactName.init)).sorted())
        }
        let orderedSets = entitlementSets.sorted(by: smallerFirst).map { $0.map(\.string) }
        let witnessMatches = witnesses.map { (document: $0.document, match: $0.rule.match) }

        var plans: [Plan] = []
        for environment in StoreEnvironment.allCases
        where invariant.requires.environments?.contains(environment) ?? true {
            let witnessEntries = space.candidates(matching: witnessMatches, in: environment)
            let selection: EntrySelection
            let roleLevel = invariant.match.isRoleLevel
            if roleLevel {
                let covering = space.candidates(matching: [(documentIndex, invariant.match)], in: environment)
                selection = EntrySelection(
                    includesEmpty: false,
                    singles: covering,
                    pairFirst: covering,
                    pairSecond: witnessEntries
                )
            } else {
                selection = EntrySelection(includesEmpty: true, singles: witnessEntries, pairFirst: [], pairSecond: [])
            }
            plans.append(
                Plan(
                    environment: environment,
                    entitlementSets: orderedSets,
                    groupTypes: ScenarioSpace.values(space.groupTypes, acceptedBy: invariant.match.groupTypes),
                    groupIDs: ScenarioSpace.values(
                        space.groupIDs(in: environment),
                        acceptedBy: invariant.match.groupIDs
                    ),
                    selection: selection,
                    candidates: space.candidates(in: environment),
                    roleLevel: roleLevel
                )
            )
        }

        // Counted (and weighed) before anything is enumerated: frames are never built.
        var count = 0
        var estimatedWork = 0
        for plan in plans {
            let perGroupID = plan.perGroupID
            let perSet = saturatingProduct(perGroupID, plan.groupIDs.count)
            count = saturatingSum(count, saturatingProduct(perSet, plan.entitlementSets.count))
            let idCost = saturatingSum(
                work.cost(groupIDs: plan.groupIDs),
                saturatingProduct(listed.count, plan.groupIDs.count)
            )
            estimatedWork = saturatingSum(
                estimatedWork,
                saturatingProduct(perGroupID, idCost, plan.entitlementSets.count)
            )
        }
        result.scenarioCount = count
        result.estimatedWork = estimatedWork
        guard count <= budget else { return result }
        guard estimatedWork <= workLimit else {
            result.workLimit = workLimit
            return result
        }
        result.status = .holds

        var evaluator = ScenarioEvaluator(policy: policy)
        for plan in plans {
            for entitlements in plan.entitlementSets {
                let context = EvaluationContext(environment: plan.environment, entitlements: Set(entitlements))
                for groupType in plan.groupTypes {
                    guard let selection = plan.entries(forType: groupType) else { continue }
                    let type = GroupType(groupType)
                    for groupID in plan.groupIDs {
                        selection.forEach(plan.candidates) { indices in
                            evaluator.evaluate(
                                groupID: groupID,
                                groupType: type,
                                entries: indices,
                                of: plan.candidates,
                                context: context
                            )
                            let offending =
                                invariant.quantifier == .never
                                ? listed.filter { evaluator.has($0) } : listed.filter { !evaluator.has($0) }
                            guard !offending.isEmpty else { return true }
                            result.status = .violated
                            result.counterexample = Scenario(
                                environment: plan.environment,
                                groupID: groupID,
                                groupType: type,
                                roles: indices.map { plan.candidates[$0].entry },
                                entitlements: entitlements
                            )
                            result.offendingCapabilities = offending.map { policy.capabilities.map(\.name)[$0] }
                            return false
                        }
                        if result.status == .violated { return result }
                    }
                }
            }
        }
        return result
    }
}

/// Orders entitlement sets smaller first, then lexicographically by bytes, so that counterexamples
/// and diff rows come out in a stable, simplest-first order.
func smallerFirst(_ lhs: [ExactName], _ rhs: [ExactName]) -> Bool {
    lhs.count != rhs.count ? lhs.count < rhs.count : lhs.lexicographicallyPrecedes(rhs)
}
