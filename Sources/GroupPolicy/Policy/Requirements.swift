import GroupPolicyBasics

/// A `requires` block: conditions on the context, all of which must hold.
package struct Requirements: Sendable, Equatable {
    package var environments: Set<StoreEnvironment>?
    package var entitlements: [String] = []

    static let none = Requirements()

    func hold(in context: EvaluationContext) -> Bool {
        if let environments, !environments.contains(context.environment) { return false }
        return entitlements.allSatisfy(context.entitlements.containsExactly)
    }

    /// Whether these requirements hold in every context in which `other` holds.
    func areWeaker(than other: Requirements) -> Bool {
        if let environments {
            guard let others = other.environments, others.isSubset(of: environments) else { return false }
        }
        return entitlements.allSatisfy { value in other.entitlements.contains { $0.isExactly(value) } }
    }
}
