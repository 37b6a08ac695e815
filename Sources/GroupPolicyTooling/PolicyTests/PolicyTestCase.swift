public import GroupPolicy

/// One case of a policy test file: a response and context, and what the decision must be.
public struct PolicyTestCase: Sendable {
    /// The case's name, unique within its file.
    public var name: String
    /// The context to evaluate in (default Production, no entitlements).
    public var context: EvaluationContext
    /// The response to evaluate.
    public var response: GetCustomerGroupsResponse
    /// What the decision must be.
    public var expectation: PolicyTestExpectation
    /// Where the case starts in its file.
    public var location: SourceLocation?

    /// Creates a case.
    public init(
        name: String,
        context: EvaluationContext = EvaluationContext(),
        response: GetCustomerGroupsResponse,
        expectation: PolicyTestExpectation,
        location: SourceLocation? = nil
    ) {
        self.name = name
        self.context = context
        self.response = response
        self.expectation = expectation
        self.location = location
    }
}

/// The outcome of one policy test case.
public struct PolicyTestResult: Sendable {
    /// The case's name.
    public var name: String
    /// Where the case starts in its file.
    public var location: SourceLocation?
    /// Each unmet part of the expectation, as "what: expected X, got Y"; empty when the case passed.
    public var failures: [String]
    /// The decision the case produced (with provenance, for explaining a failure).
    public var decision: Decision

    /// Whether every part of the expectation held.
    public var passed: Bool { failures.isEmpty }
}
