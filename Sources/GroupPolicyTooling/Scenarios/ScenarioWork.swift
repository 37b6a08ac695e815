import GroupPolicy
import GroupPolicyBasics

/// What evaluating one scenario costs under one policy version, in *rule checks*, estimated from
/// the documents before anything is enumerated (see the DocC article "Limits and failure
/// semantics", section "Limits").
///
/// Scenario budgets count scenarios, but a scenario's cost grows with the rules it can meet: the
/// role-level rules naming one product or none, the rules naming its group id (checked one by
/// one, each scanning its lists), and the capability words. `check` and `diff` multiply each
/// frame's scenarios by this estimate and refuse, before evaluating anything, when the total is
/// over ``limit``; so a policy within the scenario budget can still not take minutes.
///
/// The estimate is an upper bound of what the compiled tables do: it assumes role-level rules are
/// looked up per entry (the compiler's sparse path) even where dense tables make them one lookup.
struct ScenarioWork: Sendable {
    /// The most rule checks the invariants of one `check` together, or one `diff`, may cost:
    /// 1,000,000,000, about 3 s of a release build on a small machine (measured at 3 to 8 ns a
    /// unit on two cores, the estimate being high where it is cheap).
    static let maximum = 1_000_000_000

    /// The limit in force: ``maximum``, lowered by tests.
    @TaskLocal static var limit = maximum

    /// The fixed cost of a scenario (building the group, the context, the bit sets), in rule checks.
    static let scenarioOverhead = 40

    /// The cost of looking the group's id up among a document's rules naming group ids (hashing
    /// the id), paid by every scenario once the document has such a rule.
    static let groupIDLookupCost = 20

    /// The cost of each 64-bit word of capabilities per scenario (the tables' cells, the customer's
    /// bit set, comparing versions), in rule checks.
    static let wordCost = 3

    /// The fixed cost of evaluating a scenario into a full decision (its records, its groups and
    /// memberships), in rule checks: a workspace diff asks each version for one per scenario.
    static let decisionOverhead = 500

    /// The cost of each workspace definition in a full decision (its conditions looked up for the
    /// group and each role entry, its membership listed), in rule checks.
    static let workspaceCost = 100

    /// The cost of a scenario whose group id no rule names.
    let base: Int
    /// The extra cost of a scenario whose group has this id: the rules naming it, by their lists.
    ///
    /// Keyed by `String`, whose equality folds canonically equivalent spellings: their weights add
    /// up, which can only overestimate (the estimate is an upper bound), and hashing a hundred
    /// thousand ids stays the standard library's.
    let byGroupID: [String: Int]

    /// No cost: for a space over its limit, whose scenarios are never evaluated.
    static let nothing = ScenarioWork(base: 0, byGroupID: [:])

    private init(base: Int, byGroupID: [String: Int]) {
        self.base = base
        self.byGroupID = byGroupID
    }

    /// Estimates the cost of evaluating a scenario under the policy made of `documents`.
    init(documents: [PolicyDocument], capabilityCount: Int) {
        var base = saturatingSum(Self.scenarioOverhead, Self.wordCost * ((capabilityCount + 63) / 64))
        var byGroupID: [String: Int] = [:]
        for document in documents {
            // By `String`, as `byGroupID`: spellings folded together only overestimate.
            var perProduct: [String: Int] = [:]
            var anyProduct = 0
            var everyGroup = 0
            var requirements: Set<[ExactName]> = [[ExactName("*"), ExactName("|")]]
            for rule in document.rules {
                if let ids = rule.match.groupIDs {
                    // Checked one by one, each condition a scan of its list.
                    let weight = Self.directWeight(rule)
                    if case .oneOf(let values) = ids {
                        for id in Set(values) {
                            byGroupID[id] = saturatingSum(byGroupID[id] ?? 0, weight)
                        }
                    } else {
                        everyGroup = saturatingSum(everyGroup, weight)
                    }
                    continue
                }
                let requirement =
                    ((rule.requires.environments?.map(\.rawValue).sorted() ?? ["*"]) + ["|"]).map(ExactName.init)
                    + rule.requires.entitlements.map(ExactName.init).sorted()
                if requirements.count < 64 { requirements.insert(requirement) }
                if !requirements.contains(requirement) {
                    // Past the compiler's 64 layers a rule is checked directly for every group.
                    everyGroup = saturatingSum(everyGroup, Self.directWeight(rule))
                    continue
                }
                guard rule.match.isRoleLevel else { continue }
                if case .oneOf(let products)? = rule.match.productIDs {
                    for product in Set(products) { perProduct[product, default: 0] += 1 }
                } else {
                    anyProduct += 1
                }
            }
            if document.rules.contains(where: { $0.match.groupIDs != nil }) || requirements.count >= 64 {
                base = saturatingSum(base, Self.groupIDLookupCost)
            }
            // Per role entry (a scenario holds at most two): the rules of its product and those of any.
            let perEntry = saturatingSum((perProduct.values.max() ?? 0), anyProduct)
            base = saturatingSum(base, saturatingSum(requirements.count, saturatingSum(everyGroup, 2 * perEntry)))
        }
        self.base = base
        self.byGroupID = byGroupID
    }

    /// A direct rule's cost: each of its conditions scans its list, twice for the entry conditions.
    private static func directWeight(_ rule: RuleDefinition) -> Int {
        let match = rule.match
        let lists = [
            match.groupIDs?.values.count ?? 0,
            match.groupTypes?.values.count ?? 0,
            2 * (match.productIDs?.values.count ?? 0),
            2 * (match.roles?.values.count ?? 0),
            rule.requires.entitlements.count,
        ]
        return lists.reduce(1, saturatingSum)
    }

    /// The cost of one scenario whose group has `groupID`.
    func cost(groupID: String) -> Int {
        saturatingSum(base, byGroupID[groupID] ?? 0)
    }

    /// The summed cost of one scenario per group id of `groupIDs`.
    func cost(groupIDs: [String]) -> Int {
        groupIDs.reduce(0) { saturatingSum($0, cost(groupID: $1)) }
    }
}
