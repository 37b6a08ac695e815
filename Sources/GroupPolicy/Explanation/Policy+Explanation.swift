extension Policy {
    /// Explains one capability in each group of a response: granted (and by which rules), denied
    /// (and by which deny rules), not granted (and every grant rule that would grant it, with each of
    /// its unmet conditions), or ignored (Apple's sandbox placeholder in Production).
    ///
    /// A separate path from ``evaluate(_:in:)``: meant for support tools and debugging, not for the
    /// per-request path. Its outcomes agree with the decision's.
    ///
    /// ```swift
    /// let explanation = try policy.explain("workspace.manage-seats", for: response)
    /// print(explanation.text)
    /// ```
    ///
    /// - Parameters:
    ///   - capability: A capability the policy declares.
    ///   - response: Apple's Get Customer Groups answer for the customer.
    ///   - context: The environment and the entitlements the app derived from transactions.
    ///   - groupID: Explain only this group of the response; `nil` explains every group.
    /// - Returns: One explanation per group, in response order (repeated groups merged).
    /// - Throws: A ``GroupPolicyError`` with code `undeclaredCapability` (with a did-you-mean) when
    ///   the policy does not declare the capability, `unknownGroup` when `groupID` is not a group
    ///   of the response, or `limitExceeded` when the rules naming the capability times the groups
    ///   to explain are more than 1,000,000 (explain one group instead).
    public func explain(
        _ capability: Capability,
        for response: GetCustomerGroupsResponse,
        in context: EvaluationContext = EvaluationContext(),
        group groupID: String? = nil
    ) throws(GroupPolicyError) -> Explanation {
        try compiled.explain(capability, for: response, in: context, group: groupID)
    }
}
