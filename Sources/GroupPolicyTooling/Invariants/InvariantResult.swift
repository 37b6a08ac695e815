public import GroupPolicy

/// The outcome of checking one invariant (see the DocC article "The scenario space") over its
/// scenario space.
///
/// An invariant either holds in every scenario, is violated (with one concrete counterexample), or
/// was not checked because its space is larger than the budget; the last is a failure too, never a
/// silent pass.
public struct InvariantResult: Sendable {
    /// Whether the invariant holds, is violated, or could not be checked within the budget.
    ///
    /// New statuses may be added; compare with the static members.
    public struct Status: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case holds
            case violated
            case overBudget = "over-budget"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Every covered scenario satisfies the invariant.
        public static let holds = Status(.holds)
        /// A covered scenario breaks the invariant; ``InvariantResult/counterexample`` is one.
        public static let violated = Status(.violated)
        /// The scenario space is larger than the budget, so nothing was decided.
        public static let overBudget = Status(.overBudget)

        /// The status's identifier: `holds`, `violated` or `over-budget`.
        public var description: String { base.rawValue }
    }

    /// The invariant's id.
    public var invariantID: String
    /// The id of the policy that declares the invariant.
    public var policyID: String
    /// Where the invariant is written.
    public var location: SourcePosition?
    /// The invariant's JSON path, such as `invariants[1]`.
    public var jsonPath: String
    /// Holds, violated or over budget.
    public var status: Status
    /// How many scenarios the reduced space holds (all of them were evaluated when the invariant
    /// holds; none when it is over budget).
    public var scenarioCount: Int
    /// The budget the check ran with.
    public var budget: Int
    /// One scenario that breaks the invariant, when it is violated.
    public var counterexample: Scenario?
    /// In the counterexample, the listed capabilities the group has (`never`) or lacks (`always`).
    public var offendingCapabilities: [String]
    /// `never` or `always`.
    public var quantifier: String
    /// The estimated rule checks of the invariant's scenarios (each scenario weighted by the rules
    /// it can meet), or 0 when it was not estimated (a space over the scenario budget).
    public var estimatedWork: Int = 0
    /// When the invariant is over budget because of its work rather than its scenario count: the
    /// work limit it was over (what is left of the limit a whole check shares).
    public var workLimit: Int?

    /// Whether the invariant holds.
    public var holds: Bool { status == .holds }

    /// The finding as an error diagnostic at the invariant, or `nil` when it holds.
    public var diagnostic: Diagnostic? {
        let message: String
        switch status {
        case .violated:
            let names = offendingCapabilities.map { "'\($0)'" }.joined(separator: ", ")
            let verb =
                quantifier == "never"
                ? (offendingCapabilities.count == 1 ? "is granted" : "are granted")
                : (offendingCapabilities.count == 1 ? "is missing" : "are missing")
            message =
                "invariant '\(invariantID)' does not hold: \(names) \(verb) in "
                + (counterexample.map { "\($0)" } ?? "a covered scenario")
        case .overBudget where workLimit != nil:
            message =
                "invariant '\(invariantID)' was not checked: its \(scenarioCount) scenarios would cost about "
                + "\(estimatedWork) rule checks, over the work limit of \(workLimit ?? 0)"
        case .overBudget:
            message =
                "invariant '\(invariantID)' was not checked: its scenario space holds \(scenarioCount) scenarios, "
                + "over the budget of \(budget)"
        default:
            return nil
        }
        return Diagnostic(
            severity: .error,
            kind: .invariantViolated,
            location: location,
            jsonPath: jsonPath,
            message: message
        )
    }

    /// The counterexample as a policy test case to paste into a `*.tests.json` file: it fails until
    /// the policy satisfies the invariant.
    public var counterexampleTestCase: String? {
        guard let counterexample else { return nil }
        let name = "counterexample to invariant '\(invariantID)'"
        return quantifier == "never"
            ? counterexample.testCaseJSON(name: name, excludes: offendingCapabilities)
            : counterexample.testCaseJSON(name: name, includes: offendingCapabilities)
    }
}
