/// "Did you mean" suggestions by edit distance: the one implementation in the package, shared by
/// the loaders and, through `package` access, the command-line argument parser.
package enum Suggestion {
    /// The candidate closest to `word`, if it is close enough to be a plausible typo.
    package static func closest(to word: String, among candidates: some Sequence<String>) -> String? {
        let target = Array(word.unicodeScalars)
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let other = Array(candidate.unicodeScalars)
            // A typo changes at most a third of a name (at least one edit is allowed) and keeps
            // some of it: "y" is not a typo of "x".
            let budget = min(max(1, min(target.count, other.count) / 3), min(target.count, other.count) - 1)
            guard abs(target.count - other.count) <= budget else { continue }
            let distance = editDistance(target, other, limit: budget)
            if distance <= budget, best.map({ distance < $0.distance }) ?? true {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    /// The candidate closest to `word`, spending at most `budget` cells of edit distance (the
    /// product of the two lengths per candidate compared) and taking them from it.
    ///
    /// A document with a hundred thousand misspelt names among ten thousand declared ones would
    /// otherwise compare every pair (hours); once the budget is spent there are no more
    /// suggestions, the same ones on every run. The errors themselves are unaffected.
    package static func closest(to word: String, among candidates: [String], budget: SuggestionBudget) -> String? {
        let length = word.unicodeScalars.count
        var cost = 0
        for candidate in candidates {
            cost += max(1, length) * max(1, candidate.unicodeScalars.count)
            if cost > budget.remaining { break }
        }
        guard cost <= budget.remaining else {
            budget.remaining = 0
            return nil
        }
        budget.remaining -= cost
        return closest(to: word, among: candidates)
    }

    /// Damerau-Levenshtein distance (adjacent transpositions count once), capped above `limit`.
    static func editDistance(_ lhs: [Unicode.Scalar], _ rhs: [Unicode.Scalar], limit: Int) -> Int {
        if lhs.isEmpty { return rhs.count }
        if rhs.isEmpty { return lhs.count }
        var previousPrevious = [Int](repeating: 0, count: rhs.count + 1)
        var previous = Array(0...rhs.count)
        var current = [Int](repeating: 0, count: rhs.count + 1)
        for i in 1...lhs.count {
            current[0] = i
            var rowMinimum = current[0]
            for j in 1...rhs.count {
                let cost = lhs[i - 1] == rhs[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, lhs[i - 1] == rhs[j - 2], lhs[i - 2] == rhs[j - 1] {
                    value = min(value, previousPrevious[j - 2] + 1)
                }
                current[j] = value
                rowMinimum = min(rowMinimum, value)
            }
            if rowMinimum > limit { return limit + 1 }
            (previousPrevious, previous, current) = (previous, current, previousPrevious)
        }
        return previous[rhs.count]
    }
}

/// The work left for "did you mean" suggestions while loading one document, shared by every
/// suggestion it makes; and the sorted candidates, computed once.
package final class SuggestionBudget {
    /// Edit-distance cells one document may spend on suggestions: 20,000,000, a few tens of
    /// milliseconds.
    package static let perDocument = 20_000_000

    /// The cells left.
    package var remaining: Int

    private var sorted: (count: Int, names: [String])?

    /// A budget of `cells`.
    package init(cells: Int = perDocument) {
        remaining = cells
    }

    /// `names` sorted, computed again only when their number changed since the last call.
    package func sortedCandidates(_ names: some Collection<String>) -> [String] {
        if let sorted, sorted.count == names.count { return sorted.names }
        let names = names.sorted()
        sorted = (names.count, names)
        return names
    }
}
