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
    public var location: SourcePosition?

    /// Creates a case.
    public init(
        name: String,
        context: EvaluationContext = EvaluationContext(),
        response: GetCustomerGroupsResponse,
        expectation: PolicyTestExpectation,
        location: SourcePosition? = nil
    ) {
        self.name = name
        self.context = context
        self.response = response
        self.expectation = expectation
        self.location = location
    }
}
