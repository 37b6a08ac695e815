import GroupPolicy

/// The minimal differing scenarios of a diff, kept as the enumeration finds them.
///
/// A scenario that extends a kept one with the same change (more role entries, or more
/// entitlements) is dropped at once: the enumeration visits smaller entry sets and smaller
/// entitlement sets first, so the smaller scenario was kept before. Scenarios are kept compactly,
/// at most ``limit`` of them.
struct MinimalChanges {
    /// A differing scenario, by its coordinates in the enumeration (entries as candidate indices,
    /// -1 for none), compact so that millions of them fit in memory.
    struct Key: Hashable {
        /// What changes (a capability added or removed, a membership from one role to another).
        var code: Int32
        var plan: Int32
        var frame: Int32
        var first: Int32
        var second: Int32
        var entitlements: Int32

        init(code: Int32, plan: Int, frame: Int, entries: [Int], entitlements: Int) {
            self.code = code
            self.plan = Int32(plan)
            self.frame = Int32(frame)
            first = entries.first.map(Int32.init) ?? -1
            second = entries.count > 1 ? Int32(entries[1]) : -1
            self.entitlements = Int32(entitlements)
        }

        var entries: [Int] {
            first < 0 ? [] : second < 0 ? [Int(first)] : [Int(first), Int(second)]
        }

        /// The same scenario with other entries and entitlements.
        func with(entries: [Int], entitlements: Int) -> Key {
            Key(code: code, plan: Int(plan), frame: Int(frame), entries: entries, entitlements: entitlements)
        }
    }

    /// The entitlement sets the enumeration visits, smaller first.
    let entitlementSets: [[String]]
    /// The most scenarios kept.
    let limit: Int
    private var kept: Set<Key> = []
    /// For each code, its kept keys in enumeration order.
    private var byCode: [Int32: [Key]] = [:]
    /// The entitlement sets contained in a set (itself included), by set, computed when first needed.
    private var subsetMemo: [Int: [Int]] = [:]

    init(entitlementSets: [[String]], limit: Int) {
        self.entitlementSets = entitlementSets
        self.limit = limit
    }

    /// Keeps `key` unless a smaller kept scenario shows the same change.
    ///
    /// - Returns: `false` when `key` is new and ``limit`` scenarios are kept already (it is not).
    mutating func keep(_ key: Key) -> Bool {
        guard !extendsAnother(key) else { return true }
        guard kept.count < limit else { return false }
        kept.insert(key)
        byCode[key.code, default: []].append(key)
        return true
    }

    /// The kept scenarios by code, codes ascending, each code's in enumeration order; the kept set
    /// is released first, so that only one copy is held while rows are built.
    mutating func takeByCode() -> [(code: Int32, keys: [Key])] {
        kept = []
        let codes = byCode.keys.sorted()
        var result: [(code: Int32, keys: [Key])] = []
        for code in codes {
            if let keys = byCode.removeValue(forKey: code) { result.append((code, keys)) }
        }
        return result
    }

    /// Whether a smaller scenario (fewer entries or entitlements) with the same change is kept.
    private mutating func extendsAnother(_ key: Key) -> Bool {
        let entries = key.entries
        let setIndex = Int(key.entitlements)
        let sets = subsets(of: setIndex)
        for subset in Self.subsets(of: entries) {
            for set in sets where subset != entries || set != setIndex {
                if kept.contains(key.with(entries: subset, entitlements: set)) { return true }
            }
        }
        return false
    }

    /// The entitlement sets contained in the set at `setIndex`, compared by their bytes.
    private mutating func subsets(of setIndex: Int) -> [Int] {
        if let known = subsetMemo[setIndex] { return known }
        let superset = Set(entitlementSets[setIndex].map(ExactName.init))
        let found = entitlementSets.indices.filter { index in
            entitlementSets[index].count <= superset.count
                && entitlementSets[index].allSatisfy { superset.contains(ExactName($0)) }
        }
        subsetMemo[setIndex] = found
        return found
    }

    /// Every subset of a set of at most two entries, the set itself included.
    private static func subsets(of entries: [Int]) -> [[Int]] {
        switch entries.count {
        case 0: [[]]
        case 1: [[], entries]
        default: [[], [entries[0]], [entries[1]], entries]
        }
    }

    /// Visits every scenario of `plans` and keeps the minimal ones of each change `changes`
    /// reports for it (as codes, appended to its last argument).
    ///
    /// - Parameters:
    ///   - plans: The enumeration, environment by environment.
    ///   - entitlementSets: The entitlement sets each plan visits, smaller first.
    ///   - limit: The most scenarios kept: the diff's limit in force (``PolicyDiffer/changeLimit``)
    ///     unless given.
    ///   - subject: What changes, for the limit's message (`capability`, `workspace`).
    ///   - changes: The codes of what differs in a scenario (a frame and its role entries).
    /// - Returns: The kept scenarios by code, codes ascending, each code's in enumeration order.
    /// - Throws: A `GroupPolicyError` with code `limitExceeded` when more than `limit` are found.
    static func find(
        in plans: [DiffPlan],
        entitlementSets: [[String]],
        limit: Int = PolicyDiffer.changeLimit,
        of subject: String,
        _ changes: (DiffPlan, DiffPlan.Visit, [Int], inout [Int32]) -> Void
    ) throws(GroupPolicyError) -> [(code: Int32, keys: [Key])] {
        var kept = MinimalChanges(entitlementSets: entitlementSets, limit: limit)
        var codes: [Int32] = []
        for (planIndex, plan) in plans.enumerated() {
            let finished = plan.forEachScenario(entitlementSets: entitlementSets) { visit, entries in
                codes.removeAll(keepingCapacity: true)
                changes(plan, visit, entries, &codes)
                for code in codes {
                    let key = Key(
                        code: code,
                        plan: planIndex,
                        frame: visit.frame,
                        entries: entries,
                        entitlements: visit.setIndex
                    )
                    guard kept.keep(key) else { return false }
                }
                return true
            }
            guard finished else {
                throw GroupPolicyError(
                    code: .limitExceeded,
                    message: "the diff finds more than \(limit) minimal changes (scenario and \(subject)), "
                        + "over the limit of \(limit)"
                )
            }
        }
        return kept.takeByCode()
    }
}
