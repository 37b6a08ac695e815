public import GroupPolicy
import GroupPolicyBasics

/// What an edit changes against a baseline (the files on disk, unless another is given): the
/// scenario matrix with the cells that changed, and the diff with its verdict.
///
/// The playground's matrix answer (see the DocC article "Authoring in the playground"): both parts
/// are bounded as `diff` and ``ScenarioMatrix`` are, and a diff that cannot be computed (over its
/// budget or a limit) leaves the matrix, with the line saying why.
public struct PolicyComparison: Sendable {
    /// The edited policy against the baseline, every scenario evaluated, a window of it listed.
    public let matrix: ScenarioMatrix
    /// `diff BASELINE EDITED`; `nil` without a baseline that loads, or when it was refused.
    public let diff: PolicyDiff?
    /// Why ``diff`` was refused (the line `diff` prints), or `nil`.
    public let diffRefusal: String?

    /// The change's verdict over the scenario space, when the diff was computed.
    public var verdict: PolicyDiff.Verdict? { diff?.verdict }

    /// Compares `policy` with `baseline`.
    ///
    /// - Parameters:
    ///   - policy: The policy as edited.
    ///   - baseline: The policy to compare with; `nil` compares nothing (no cell changes, no diff).
    ///   - context: The environment and verified entitlements of the matrix's scenarios.
    ///   - window: Where the matrix's listed cells start, when it does not fit whole.
    /// - Throws: What ``ScenarioMatrix/init(policy:savedPolicy:context:window:)`` throws.
    public init(
        policy: Policy,
        baseline: Policy?,
        context: EvaluationContext,
        window: ScenarioMatrix.Window = ScenarioMatrix.Window()
    ) throws(GroupPolicyError) {
        matrix = try ScenarioMatrix(policy: policy, savedPolicy: baseline, context: context, window: window)
        guard let baseline else {
            diff = nil
            diffRefusal = nil
            return
        }
        do {
            diff = try PolicyDiff(from: baseline, to: policy)
            diffRefusal = nil
        } catch {
            diff = nil
            diffRefusal = error.message
        }
    }

    /// The comparison as JSON: `matrix` (``ScenarioMatrix/jsonString(pretty:)``), `verdict` (or
    /// `null`), `diff` (``PolicyDiff/jsonString(pretty:)``, or `null`) and `diffRefusal` (or `null`).
    ///
    /// - Returns: Compact JSON text.
    public func jsonString() -> String {
        // The parts are JSON of their own writers, put together as they are.
        let verdict = verdict.map { JSONWriter.quoted($0.description) } ?? "null"
        let refusal = diffRefusal.map(JSONWriter.quoted) ?? "null"
        return #"{"matrix":"# + matrix.jsonString() + #","verdict":"# + verdict + #","diff":"#
            + (diff?.jsonString(pretty: false) ?? "null") + #","diffRefusal":"# + refusal + "}"
    }
}

extension PolicyWorkbench {
    /// Compares the edited policy set with the files on disk (or with `baseline`), as the
    /// playground's matrix shows it.
    ///
    /// - Parameters:
    ///   - context: The environment and verified entitlements of the matrix's scenarios.
    ///   - window: Where the matrix's listed cells start, when it does not fit whole.
    ///   - baseline: The version to compare with; `nil` for the files as saved (a saved set that
    ///     does not load is compared with nothing: no cell changes, no diff).
    /// - Returns: The matrix and the diff.
    /// - Throws: What ``policy()`` throws for the edited set, or what the matrix throws.
    public func compare(
        context: EvaluationContext,
        window: ScenarioMatrix.Window = ScenarioMatrix.Window(),
        baseline: Policy? = nil
    ) throws(GroupPolicyError) -> PolicyComparison {
        let policy = try policy()
        let baseline = baseline ?? (try? savedPolicy())
        return try PolicyComparison(policy: policy, baseline: baseline, context: context, window: window)
    }
}
