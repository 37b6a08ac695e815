import GroupPolicyBasics

/// A condition on one string attribute: any value, or one of a list (exact, case-sensitive).
package enum ValueCondition: Sendable, Equatable {
    /// `"*"`: every value, including `NONE` and values this version does not know.
    case any
    case oneOf([String])

    /// Whether every value this condition matches is matched by `other` too.
    func isSubset(of other: ValueCondition?) -> Bool {
        guard let other else { return true }
        switch (self, other) {
        case (_, .any): return true
        case (.any, .oneOf): return false
        case (.oneOf(let mine), .oneOf(let theirs)):
            // Long lists are compared through a set of their bytes (exact, like `isExactly`), so two
            // lists of thousands of names cost their lengths, not their product.
            guard mine.count > 16, theirs.count > 16 else {
                return mine.allSatisfy { value in theirs.contains { $0.isExactly(value) } }
            }
            let accepted = Set(theirs.map { Array($0.utf8) })
            return mine.allSatisfy { accepted.contains(Array($0.utf8)) }
        }
    }

    package var values: [String] {
        switch self {
        case .any: []
        case .oneOf(let values): values
        }
    }
}
