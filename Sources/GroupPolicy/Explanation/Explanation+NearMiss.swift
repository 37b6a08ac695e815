extension Explanation {
    /// A grant rule that names the capability but did not match in a group, with every condition of it
    /// that the group or the context does not meet.
    public struct NearMiss: Sendable, Hashable {
        /// The rule's id (`policy-id/rule-id` in a set of several policies, as in provenance).
        public var rule: String
        /// The unmet conditions, in the order `groupType`, `groupId`, role entry, `environment`,
        /// `entitlements`; never empty.
        public var unmet: [Explanation.UnmetCondition]

        /// Creates a near miss.
        public init(rule: String, unmet: [Explanation.UnmetCondition]) {
            self.rule = rule
            self.unmet = unmet
        }
    }
}
