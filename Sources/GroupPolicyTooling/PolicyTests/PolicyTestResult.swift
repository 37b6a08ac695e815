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

    /// Whether every part of the expectation held.
    public var passed: Bool { failures.isEmpty }
}
