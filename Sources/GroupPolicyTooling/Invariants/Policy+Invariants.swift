public import GroupPolicy

extension Policy {
    /// The largest reduced scenario space ``checkInvariants(budget:)`` enumerates for one invariant
    /// unless told otherwise: a million scenarios, about a second of work.
    public static let defaultInvariantBudget = 1_000_000

    /// Checks every invariant of the policy (or set) exhaustively over its scenario space.
    ///
    /// The space is the one of the DocC article "The scenario space", extended with every
    /// `groupType` and `role` the policy names. It is enumerated in a reduced form that is provably
    /// equivalent: a violation exists in the full space exactly when one exists among scenarios
    /// with at most two role entries and entitlement sets that are unions of the invariant's and
    /// one rule's `requires.entitlements` (see <doc:ScenarioSpace>).
    ///
    /// - Parameter budget: The most scenarios one invariant's reduced space may hold; a larger
    ///   space is reported ``InvariantResult/Status/overBudget`` without being enumerated. So is an
    ///   invariant whose scenarios would cost more rule checks than what is left of the check's
    ///   work limit (1,000,000,000 for all the invariants together; see the DocC article "Limits
    ///   and failure semantics").
    /// - Returns: One result per invariant, in policy order, then file order.
    public func checkInvariants(budget: Int = Policy.defaultInvariantBudget) -> [InvariantResult] {
        checkInvariants(budget: budget, space: nil)
    }

    /// ``checkInvariants(budget:)`` over `space`, the policy's own scenario space, when it is built
    /// already (a check builds it once for the invariants and the rule analysis).
    func checkInvariants(budget: Int, space: ScenarioSpace?) -> [InvariantResult] {
        var results: [InvariantResult] = []
        // The space is built only when there is an invariant to check.
        guard documents.contains(where: { !$0.invariants.isEmpty }) else { return results }
        let checker = InvariantChecker(policy: self, budget: budget, space: space)
        // The work limit bounds the whole check, not each invariant: thousands of invariants each
        // just under it would otherwise add up to hours.
        var remainingWork = ScenarioWork.limit
        for (index, document) in checker.documents.enumerated() {
            for invariant in document.invariants {
                let result = checker.check(invariant, document: index, budget: budget, workLimit: remainingWork)
                if result.status != .overBudget { remainingWork -= min(remainingWork, result.estimatedWork) }
                results.append(result)
            }
        }
        return results
    }
}
