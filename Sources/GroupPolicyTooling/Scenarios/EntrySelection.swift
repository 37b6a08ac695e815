import GroupPolicy

/// The sets of role entries a reduced enumeration visits in one environment: perhaps the empty
/// set, single entries, and pairs whose first entry comes from one set of candidates and second
/// from another, in different product slots.
///
/// Candidates are indices into ``ScenarioSpace/candidates(in:)``. Each unordered pair is visited
/// once, even when both of its entries are in both sets.
struct EntrySelection: Sendable {
    var includesEmpty: Bool
    var singles: [Int]
    var pairFirst: [Int]
    var pairSecond: [Int]

    init(
        includesEmpty: Bool,
        singles: some Sequence<Int>,
        pairFirst: some Sequence<Int>,
        pairSecond: some Sequence<Int>
    ) {
        self.includesEmpty = includesEmpty
        self.singles = Set(singles).sorted()
        let first = Set(pairFirst)
        let second = Set(pairSecond)
        // A pair needs one entry from each side; with either side empty there is none.
        self.pairFirst = second.isEmpty ? [] : first.sorted()
        self.pairSecond = first.isEmpty ? [] : second.sorted()
    }

    /// Only the empty set of entries (a `CONSUMER` group, or a scenario without entries).
    static let emptyOnly = EntrySelection(includesEmpty: true, singles: [], pairFirst: [], pairSecond: [])

    /// How many entry sets this selection visits.
    func count(_ candidates: [ScenarioSpace.Candidate]) -> Int {
        var total = (includesEmpty ? 1 : 0) + singles.count
        guard !pairFirst.isEmpty, !pairSecond.isEmpty else { return total }
        // Ordered pairs in different slots, less the pairs counted in both orders.
        func slotCounts(_ indices: [Int]) -> [Int: Int] {
            var counts: [Int: Int] = [:]
            for index in indices { counts[candidates[index].slot, default: 0] += 1 }
            return counts
        }
        func crossSlotPairs(_ lhs: [Int], _ rhs: [Int]) -> Int {
            let rhsCounts = slotCounts(rhs)
            let sameSlot = slotCounts(lhs).reduce(0) { $0 + $1.value * (rhsCounts[$1.key] ?? 0) }
            return lhs.count * rhs.count - sameSlot
        }
        let both = Set(pairFirst).intersection(pairSecond).sorted()
        total += crossSlotPairs(pairFirst, pairSecond) - crossSlotPairs(both, both) / 2
        return total
    }

    /// Calls `body` with each entry set, as candidate indices in ascending order, until it returns
    /// `false`.
    ///
    /// - Returns: `false` when `body` stopped the enumeration.
    @discardableResult
    func forEach(_ candidates: [ScenarioSpace.Candidate], _ body: ([Int]) -> Bool) -> Bool {
        if includesEmpty && !body([]) { return false }
        for index in singles where !body([index]) { return false }
        guard !pairFirst.isEmpty else { return true }
        let firstSet = Set(pairFirst)
        let secondSet = Set(pairSecond)
        for first in pairFirst {
            for second in pairSecond where candidates[first].slot != candidates[second].slot {
                // Visited already as (second, first) when that order is a pair of the selection too.
                if second < first && firstSet.contains(second) && secondSet.contains(first) { continue }
                if !body(first < second ? [first, second] : [second, first]) { return false }
            }
        }
        return true
    }
}
