import GroupPolicy
import GroupPolicyBasics

/// Finds, exactly over the reduced scenario space, the rules whose removal changes no decision and
/// the capabilities no scenario receives (see ``RuleAnalysis``).
///
/// Why the reduced space suffices. Fix a group (its type and id) and an environment; whether a rule
/// matches is monotone in the role entries S and the entitlements E (see ``InvariantChecker``).
///
/// - A grant rule r matters when, in some scenario (S, E), it grants a capability c that no other
///   matching grant rule grants and no matching deny rule denies. Keep in S only the entry through
///   which r matches (none for a group-level r) and shrink E to r's entitlements: r still matches,
///   the other grants and the denials only shrank. So r matters exactly when it does in a scenario
///   with at most one entry, whose entitlements are r's.
/// - A deny rule d matters when it is the only matching deny of a capability c some matching grant
///   rule g grants. Keep the entries through which g and d match and shrink E to theirs: g and d
///   still match, the other denies only shrank. So at most two entries, entitlements g's and d's.
/// - A capability c is received when some grant g of it matches and no deny of it does; as for a
///   grant, a scenario of at most g's entry and g's entitlements shows it.
///
/// Those are the scenarios a diff of the policy with itself enumerates (``DiffPlan``), which this
/// enumerates. In each, the runtime's compiled tables give the group's capabilities, as for
/// requests; which rules match is read from the rules' conditions, through the space's own
/// indexes; and the two are checked against each other in every scenario (the granted minus the
/// denied must be the runtime's answer), so a disagreement stops the analysis rather than
/// producing a warning.
struct RuleAnalyzer {
    /// A rule, compiled for matching scenarios of the space.
    private struct Rule {
        var document: Int
        var index: Int
        var isGrant: Bool
        /// The capabilities as the catalog's words that are not zero: (word index, word).
        var words: [(Int, UInt64)]
        /// Entitlements, interned.
        var entitlements: [Int]
        var environments: Set<StoreEnvironment>?
        /// The group types (indices into the space's) the rule accepts; `nil`: any.
        var types: Set<Int>?
        /// The group ids (interned) the rule accepts; `nil`: any.
        var ids: Set<Int>?
        var isRoleLevel: Bool
    }

    let policy: Policy
    private let documents: [PolicyDocument]
    private let space: ScenarioSpace
    private var rules: [Rule] = []
    private let wordCount: Int
    private var entitlementIDs: [ExactName: Int] = [:]
    private var groupIDIndex: [ExactName: Int] = [:]

    /// Why the analysis is not done, when it is refused before enumerating.
    private(set) var refusal: String?
    private var plans: [DiffPlan] = []
    private var entitlementSets: [[String]] = []
    /// Per plan, role-level rules by the candidate entry they match.
    private var rulesByCandidate: [[Int: [Int]]] = []
    /// Group-level rules that name no group id, and those naming each id.
    private var groupLevelAnyID: [Int] = []
    private var groupLevelByID: [Int: [Int]] = [:]
    /// How many scenarios the enumeration visits, and its estimated work.
    private(set) var scenarioCount = 0
    private(set) var estimatedWork = 0

    /// Prepares the analysis of `policy` over `space` (built from its documents), refusing it
    /// (``refusal``) when the space is over its limit, holds more than `budget` scenarios, or
    /// would cost more than `workLimit` rule checks: counted and weighed before the rules are
    /// indexed or anything is evaluated.
    init(policy: Policy, space: ScenarioSpace, budget: Int, workLimit: Int) {
        self.policy = policy
        documents = policy.documents
        self.space = space
        wordCount = max(1, (policy.capabilities.count + 63) / 64)
        guard !space.isOverLimit else {
            refusal =
                "the scenario space has \(space.candidateCount) role entries (products x roles) per environment, "
                + "over the limit of \(ScenarioSpace.maximumCandidates)"
            return
        }
        guard plan(budget: budget, workLimit: workLimit) else { return }
        indexRules(workLimit: workLimit)
    }

    /// Builds the entitlement sets and the plans, and counts and weighs them; `false` when they
    /// are refused.
    private mutating func plan(budget: Int, workLimit: Int) -> Bool {
        // A grant's entitlements, and those with each deny of a capability it grants (as a diff
        // pairs them).
        var grants: [(document: Int, rule: RuleDefinition)] = []
        var denies: [(document: Int, rule: RuleDefinition)] = []
        for (index, document) in documents.enumerated() {
            for rule in document.rules {
                if rule.effect == .grant { grants.append((index, rule)) } else { denies.append((index, rule)) }
            }
        }
        var sets: Set<[ExactName]> = [[]]
        var members = 0
        var denyEntitlements: [ExactName: Set<[ExactName]>] = [:]
        for deny in denies {
            let own = Set(deny.rule.requires.entitlements.map(ExactName.init)).sorted()
            for capability in Set(deny.rule.capabilities.map(ExactName.init)) {
                denyEntitlements[capability, default: []].insert(own)
            }
        }
        for grant in grants {
            let own = Set(grant.rule.requires.entitlements.map(ExactName.init)).sorted()
            members = saturatingSum(members, own.count)
            sets.insert(own)
            var paired: Set<[ExactName]> = []
            if !denyEntitlements.isEmpty {
                for capability in Set(grant.rule.capabilities.map(ExactName.init)) {
                    paired.formUnion(denyEntitlements[capability] ?? [])
                }
            }
            for entitlements in paired {
                members = saturatingSum(members, own.count + entitlements.count)
                sets.insert(Set(own + entitlements).sorted())
            }
            if sets.count > budget || members > PolicyDiffer.maximumEntitlementMembers { break }
        }
        guard sets.count <= budget, members <= PolicyDiffer.maximumEntitlementMembers else {
            refusal =
                "its entitlement sets are more than \(budget), or hold more than "
                + "\(PolicyDiffer.maximumEntitlementMembers) entitlements together"
            return false
        }
        entitlementSets = sets.sorted(by: smallerFirst).map { $0.map(\.string) }
        // Every frame visits at least the scenario without entries: frames over the budget are over
        // it by themselves, and their entries are not looked for.
        let frames = saturatingProduct(
            space.groupTypes.count,
            space.groupIDs(in: .production).count + space.groupIDs(in: .sandbox).count
        )
        guard frames <= budget else {
            refusal = "its reduced space holds more than \(budget) scenarios, over the budget of \(budget)"
            return false
        }
        // Each environment's entries: those of any rule, and apart, those of grants and denies when
        // there are both (a policy without denies visits single entries only, counted as found).
        let grantMatches = grants.map { ($0.document, $0.rule.match) }
        let denyMatches = denies.map { ($0.document, $0.rule.match) }
        var selections: [(environment: StoreEnvironment, selection: EntrySelection?, singles: Set<Int>)] = []
        var count = 0
        for environment in StoreEnvironment.allCases {
            let singles = space.candidates(matching: grantMatches + denyMatches, in: environment)
            var selection: EntrySelection?
            var perFrame = 1 + singles.count
            if !grants.isEmpty, !denies.isEmpty {
                let paired = EntrySelection(
                    includesEmpty: true,
                    singles: singles,
                    pairFirst: space.candidates(matching: grantMatches, in: environment),
                    pairSecond: space.candidates(matching: denyMatches, in: environment)
                )
                perFrame = paired.count(space.candidates(in: environment))
                selection = paired
            }
            // A CONSUMER group visits only the scenario without entries.
            let ids = space.groupIDs(in: environment).count
            let consumer = space.groupTypes.contains(GroupType.consumer.rawValue) ? 1 : 0
            let perID = saturatingSum(consumer, saturatingProduct(space.groupTypes.count - consumer, perFrame))
            let perSet = saturatingProduct(ids, perID)
            count = saturatingSum(count, saturatingProduct(perSet, entitlementSets.count))
            guard count <= budget else {
                scenarioCount = count
                refusal = "its reduced space holds more than \(budget) scenarios, over the budget of \(budget)"
                return false
            }
            selections.append((environment, selection, singles))
        }
        let work = ScenarioWork(documents: documents, capabilityCount: policy.capabilities.count)
        var plans = DiffPlans(entitlementSets: entitlementSets.count, old: work, new: .nothing, perScenario: wordCount)
        for (environment, selection, singles) in selections {
            plans.append(
                DiffPlan(
                    environment: environment,
                    candidates: space.candidates(in: environment),
                    groupTypes: space.groupTypes,
                    groupIDs: space.groupIDs(in: environment),
                    selection: selection
                        ?? EntrySelection(includesEmpty: true, singles: singles, pairFirst: [], pairSecond: [])
                )
            )
        }
        self.plans = plans.plans
        scenarioCount = plans.scenarioCount
        estimatedWork = plans.work
        if scenarioCount > budget {
            refusal = "its reduced space holds \(scenarioCount) scenarios, over the budget of \(budget)"
        } else if estimatedWork > workLimit {
            refusal =
                "its \(scenarioCount) scenarios would cost about \(estimatedWork) rule checks, over the work limit "
                + "of \(workLimit)"
        }
        return refusal == nil
    }

    /// Compiles the rules for matching, and indexes them by group id and by the entries they match.
    private mutating func indexRules(workLimit: Int) {
        for (index, id) in (space.groupIDs + [GetCustomerGroupsResponse.sandboxPlaceholderGroupID]).enumerated() {
            if groupIDIndex[ExactName(id)] == nil { groupIDIndex[ExactName(id)] = index }
        }
        var typeIndex: [ExactName: Int] = [:]
        for (index, type) in space.groupTypes.enumerated() { typeIndex[ExactName(type)] = index }
        func intern(_ name: String) -> Int {
            if let known = entitlementIDs[ExactName(name)] { return known }
            entitlementIDs[ExactName(name)] = entitlementIDs.count
            return entitlementIDs.count - 1
        }
        for (documentIndex, document) in documents.enumerated() {
            for (ruleIndex, definition) in document.rules.enumerated() {
                var words = [UInt64](repeating: 0, count: wordCount)
                for name in definition.capabilities {
                    guard let bit = policy.capabilityIndex(of: name) else { continue }
                    words[bit >> 6] |= 1 << UInt64(bit & 63)
                }
                let match = definition.match
                let rule = Rule(
                    document: documentIndex,
                    index: ruleIndex,
                    isGrant: definition.effect == .grant,
                    words: words.indices.compactMap { words[$0] == 0 ? nil : ($0, words[$0]) },
                    entitlements: Set(definition.requires.entitlements.map(intern)).sorted(),
                    environments: definition.requires.environments,
                    types: match.groupTypes.map { condition in
                        Set(condition.values.compactMap { typeIndex[ExactName($0)] })
                    },
                    ids: match.groupIDs.map { condition in
                        Set(condition.values.compactMap { groupIDIndex[ExactName($0)] })
                    },
                    isRoleLevel: match.isRoleLevel
                )
                if !rule.isRoleLevel {
                    if let ids = rule.ids {
                        for id in ids { groupLevelByID[id, default: []].append(rules.count) }
                    } else {
                        groupLevelAnyID.append(rules.count)
                    }
                }
                rules.append(rule)
            }
        }
        // Each role-level rule's entries, found through the space's indexes: what that costs is
        // counted before each is looked for.
        var indexCost = 0
        for environment in StoreEnvironment.allCases {
            var found: [Int: [Int]] = [:]
            for (position, rule) in rules.enumerated() where rule.isRoleLevel {
                guard rule.environments?.contains(environment) ?? true else { continue }
                let match = documents[rule.document].rules[rule.index].match
                let products = match.productIDs.map { $0 == .any ? space.slots.count : $0.values.count }
                let roles = match.roles.map { $0 == .any ? space.roles.count : $0.values.count }
                indexCost = saturatingSum(
                    indexCost,
                    saturatingProduct(2, products ?? space.slots.count, roles ?? space.roles.count)
                )
                guard saturatingSum(estimatedWork, indexCost) <= workLimit else {
                    refusal =
                        "finding the entries its rules match would cost more than the work limit of \(workLimit)"
                    return
                }
                for candidate in space.candidates(matching: [(rule.document, match)], in: environment) {
                    found[candidate, default: []].append(position)
                }
            }
            rulesByCandidate.append(found)
        }
        estimatedWork = saturatingSum(estimatedWork, indexCost)
    }

    /// What the enumeration found.
    struct Findings {
        /// Per rule, documents in order and each document's rules in order, whether removing it
        /// changes the capabilities of some scenario.
        var matters: [Bool]
        /// The capabilities some scenario receives, as the catalog's words.
        var received: [UInt64]
        /// The capabilities some grant rule grants, as the catalog's words.
        var granted: [UInt64]
        /// Why the enumeration stopped before its end (the work limit, or the rules' reading and
        /// the runtime disagreeing), or `nil`.
        var stopped: String?
    }

    /// The documents and rules in the order of ``Findings/matters``.
    var ruleCoordinates: [(document: Int, rule: Int)] { rules.map { ($0.document, $0.index) } }

    /// Enumerates the plans, stopping once every rule is known to matter and every granted
    /// capability to be received, or when the work done passes `workLimit`.
    func run(workLimit: Int) -> Findings {
        var findings = Findings(
            matters: [Bool](repeating: false, count: rules.count),
            received: [UInt64](repeating: 0, count: wordCount),
            granted: [UInt64](repeating: 0, count: wordCount),
            stopped: nil
        )
        for rule in rules where rule.isGrant {
            for (word, bits) in rule.words { findings.granted[word] |= bits }
        }
        var unknown = rules.count
        var evaluator = ScenarioEvaluator(policy: policy)
        let engineWork = ScenarioWork(documents: documents, capabilityCount: policy.capabilities.count)
        var seen = [Int](repeating: -1, count: rules.count)
        var stamp = 0
        // Per entitlement, the set index it was last seen in: it is in the current set when equal.
        var inSet = [Int](repeating: -1, count: entitlementIDs.count)
        var currentSet = -1
        var grantedOnce = [UInt64](repeating: 0, count: wordCount)
        var grantedTwice = grantedOnce
        var deniedOnce = grantedOnce
        var deniedTwice = grantedOnce
        var matchedGrants: [Int] = []
        var matchedDenies: [Int] = []
        var work = 0
        var done = false
        let placeholder = GetCustomerGroupsResponse.sandboxPlaceholderGroupID
        for (planIndex, plan) in plans.enumerated() where !done && findings.stopped == nil {
            let byCandidate = rulesByCandidate[planIndex]
            let environment = plan.environment
            let idIndices = plan.groupIDs.map { groupIDIndex[ExactName($0)] }
            plan.forEachScenario(entitlementSets: entitlementSets) { visit, entries in
                if visit.setIndex != currentSet {
                    currentSet = visit.setIndex
                    for name in entitlementSets[currentSet] {
                        if let id = entitlementIDs[ExactName(name)] { inSet[id] = currentSet }
                    }
                }
                let typeIndex = visit.frame / plan.groupIDs.count
                let idIndex = idIndices[visit.frame % plan.groupIDs.count]
                // In Production the runtime ignores the sandbox placeholder's group: no rule matters.
                if environment == .production, visit.groupID.isExactly(placeholder) { return true }
                stamp += 1
                matchedGrants.removeAll(keepingCapacity: true)
                matchedDenies.removeAll(keepingCapacity: true)
                for word in 0..<wordCount {
                    grantedOnce[word] = 0
                    grantedTwice[word] = 0
                    deniedOnce[word] = 0
                    deniedTwice[word] = 0
                }
                func consider(_ position: Int) {
                    guard seen[position] != stamp else { return }
                    seen[position] = stamp
                    work += 1
                    let rule = rules[position]
                    if let environments = rule.environments, !environments.contains(environment) { return }
                    if let types = rule.types, !types.contains(typeIndex) { return }
                    if let ids = rule.ids, !(idIndex.map(ids.contains) ?? false) { return }
                    for entitlement in rule.entitlements where inSet[entitlement] != currentSet { return }
                    work += rule.words.count
                    if rule.isGrant {
                        matchedGrants.append(position)
                        for (word, bits) in rule.words {
                            grantedTwice[word] |= grantedOnce[word] & bits
                            grantedOnce[word] |= bits
                        }
                    } else {
                        matchedDenies.append(position)
                        for (word, bits) in rule.words {
                            deniedTwice[word] |= deniedOnce[word] & bits
                            deniedOnce[word] |= bits
                        }
                    }
                }
                for position in groupLevelAnyID { consider(position) }
                if let idIndex { for position in groupLevelByID[idIndex] ?? [] { consider(position) } }
                for entry in entries { for position in byCandidate[entry] ?? [] { consider(position) } }

                evaluator.evaluate(
                    groupID: visit.groupID,
                    groupType: visit.groupType,
                    entries: entries,
                    of: plan.candidates,
                    context: visit.context
                )
                let capabilities = evaluator.capabilities
                for word in 0..<wordCount {
                    let runtime = capabilities.word(at: word)
                    guard grantedOnce[word] & ~deniedOnce[word] == runtime else {
                        findings.stopped =
                            "the rules read as matching in \(visit.context.environment.rawValue), \(visit.groupType.rawValue) "
                            + "group '\(visit.groupID)' do not give the capabilities the runtime gives"
                        return false
                    }
                    findings.received[word] |= runtime
                }
                for position in matchedGrants where !findings.matters[position] {
                    // A capability it grants that no other matching grant grants, and that is received.
                    if rules[position].words.contains(where: { word, bits in
                        bits & grantedOnce[word] & ~deniedOnce[word] & ~grantedTwice[word] != 0
                    }) {
                        findings.matters[position] = true
                        unknown -= 1
                    }
                }
                for position in matchedDenies where !findings.matters[position] {
                    // A capability it alone denies, that a matching grant grants.
                    if rules[position].words.contains(where: { word, bits in
                        bits & deniedOnce[word] & ~deniedTwice[word] & grantedOnce[word] != 0
                    }) {
                        findings.matters[position] = true
                        unknown -= 1
                    }
                }
                work = saturatingSum(work, saturatingSum(engineWork.cost(groupID: visit.groupID), wordCount))
                guard work <= workLimit else {
                    findings.stopped = "it would cost more than the work limit of \(workLimit) rule checks"
                    return false
                }
                if unknown == 0, zip(findings.received, findings.granted).allSatisfy({ $0 & $1 == $1 }) {
                    done = true
                    return false
                }
                return true
            }
        }
        return findings
    }
}
