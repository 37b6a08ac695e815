/// A condition on one string attribute: any value, or one of a list (exact, case-sensitive).
package enum ValueCondition: Sendable, Equatable {
    /// `"*"`: every value, including `NONE` and values this version does not know.
    case any
    case oneOf([String])

    package func matches(_ value: String) -> Bool {
        switch self {
        case .any: true
        case .oneOf(let values): values.contains { $0.isExactly(value) }
        }
    }

    /// Whether every value this condition matches is matched by `other` too.
    func isSubset(of other: ValueCondition?) -> Bool {
        guard let other else { return true }
        switch (self, other) {
        case (_, .any): return true
        case (.any, .oneOf): return false
        case (.oneOf(let mine), .oneOf(let theirs)):
            return mine.allSatisfy { value in theirs.contains { $0.isExactly(value) } }
        }
    }

    package var values: [String] {
        switch self {
        case .any: []
        case .oneOf(let values): values
        }
    }
}
