import GroupPolicy

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
    let policy: CompiledPolicy
    let space: ScenarioSpace

    /// Builds the scenario space of the policy's documents.
    ///
    /// A space with more role entries than ``ScenarioSpace/maximumCandidates`` is not built (its
    /// invariants are reported over budget), so a policy naming huge numbers of products and roles
    /// costs no memory here; below it, each invariant's reduced space is counted against its
    /// budget before it is enumerated.
    init(policy: CompiledPolicy, budget: Int = Int.max) {
        self.policy = policy
        self.space = ScenarioSpace(
            documents: policy.documents.map(\.document),
            maximumCandidates: ScenarioSpace.maximumCandidates
        )
    }

    /// The scenarios one invariant needs, per environment.
    private struct Plan {
        var environment: StoreEnvironment
        var entitlementSets: [[String]]
        var frames: [(groupType: String, groupID: String, entries: EntrySelection)]
        var candidates: [ScenarioSpace.Candidate]

        var count: Int {
            let perSet = frames.reduce(0) { saturatingSum($0, $1.entries.count(candidates)) }
            return saturatingProduct(perSet, entitlementSets.count)
        }
    }

    func check(_ invariant: InvariantDefinition, document documentIndex: Int, budget: Int) -> InvariantResult {
        let document = policy.documents[documentIndex].document
        guard !space.isOverLimit else {
            return InvariantResult(
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
        }
        let listed = invariant.capabilities.compactMap(policy.catalog.index(of:))
        let listedNames = Set(invariant.capabilities)
        // The rules that can witness a violation: grants of a listed capability break `never`,
        // denials of one break `always`.
        let witnessEffect: RuleEffect = invariant.quantifier == .never ? .grant : .deny
        var witnesses: [(document: Int, match: MatchCondition)] = []
        var entitlementSets: Set<[String]> = [invariant.requires.entitlements.sorted()]
        for (index, compiled) in policy.documents.enumerated() {
            for rule in compiled.document.rules
            where rule.effect == witnessEffect && rule.capabilities.contains(where: listedNames.contains) {
                witnesses.append((index, rule.match))
                entitlementSets.insert(Set(invariant.requires.entitlements + rule.requires.entitlements).sorted())
            }
        }
        let orderedSets = entitlementSets.sorted(by: smallerFirst)

        var plans: [Plan] = []
        for environment in StoreEnvironment.allCases
        where invariant.requires.environments?.contains(environment) ?? true {
            let witnessEntries = space.candidates(matching: witnesses, in: environment)
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
            var frames: [(String, String, EntrySelection)] = []
            for groupType in space.groupTypes where invariant.match.groupTypes?.matches(groupType) ?? true {
                for groupID in space.groupIDs(in: environment) where invariant.match.groupIDs?.matches(groupID) ?? true
                {
                    if groupType == GroupType.consumer.rawValue {
                        // A CONSUMER group has no role entries, so a role-level match never covers it.
                        if !roleLevel { frames.append((groupType, groupID, .emptyOnly)) }
                    } else {
                        frames.append((groupType, groupID, selection))
                    }
                }
            }
            plans.append(
                Plan(
                    environment: environment,
                    entitlementSets: orderedSets,
                    frames: frames,
                    candidates: space.candidates(in: environment)
                )
            )
        }

        var result = InvariantResult(
            invariantID: invariant.id,
            policyID: document.id,
            location: invariant.location,
            jsonPath: invariant.path.description,
            status: .holds,
            scenarioCount: plans.reduce(0) { saturatingSum($0, $1.count) },
            budget: budget,
            counterexample: nil,
            offendingCapabilities: [],
            quantifier: invariant.quantifier.rawValue
        )
        guard result.scenarioCount <= budget else {
            result.status = .overBudget
            return result
        }

        var evaluator = ScenarioEvaluator(policy: policy)
        for plan in plans {
            for entitlements in plan.entitlementSets {
                let context = EvaluationContext(environment: plan.environment, entitlements: Set(entitlements))
                for (groupType, groupID, selection) in plan.frames {
                    let type = GroupType(groupType)
                    selection.forEach(plan.candidates) { indices in
                        let roles = indices.map { plan.candidates[$0].entry }
                        evaluator.evaluate(
                            groupID: groupID,
                            groupType: type,
                            roles: roles,
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
                            roles: roles,
                            entitlements: entitlements
                        )
                        result.offendingCapabilities = offending.map { policy.catalog.names[$0] }
                        return false
                    }
                    if result.status == .violated { return result }
                }
            }
        }
        return result
    }
}

/// Orders entitlement sets smaller first, then lexicographically, so that counterexamples and diff
/// rows come out in a stable, simplest-first order.
func smallerFirst(_ lhs: [String], _ rhs: [String]) -> Bool {
    lhs.count != rhs.count ? lhs.count < rhs.count : lhs.lexicographicallyPrecedes(rhs)
}
