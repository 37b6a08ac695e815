public import GroupPolicy

/// The outcome of one policy test case.
public struct PolicyTestResult: Sendable {
    /// The case's name.
    public var name: String
    /// Where the case starts in its file.
    public var location: SourcePosition?
    /// Each unmet part of the expectation, as "what: expected X, got Y"; empty when the case passed.
    public var failures: [String]
    /// The decision the case produced (with provenance, for explaining a failure).
    public var decision: Decision
    /// Which of its run's distinct decisions ``decision`` is (cases sharing a response and a
    /// context share one), so coverage records each once; `nil` for a case run on its own.
    var sharedDecision: Int? = nil
    /// Why the decision holds or lacks each capability the failed expectation names, as
    /// `explain` prints it (the playground shows them; the runner leaves them empty).
    var explanations: [String] = []

    /// Whether every part of the expectation held.
    public var passed: Bool { failures.isEmpty }
}
