extension Explanation {
    /// Why one capability is or is not granted in one group.
    public struct Group: Sendable, Hashable {
        /// What the group gives the capability.
        public enum Outcome: String, Sendable, Hashable, CaseIterable {
            /// A grant rule matched and no deny rule did: the group gives the capability.
            case granted
            /// A grant rule matched, and a deny rule matched too and removed the capability.
            case denied
            /// No grant rule naming the capability matched.
            case notGranted
            /// Apple's sandbox placeholder group in Production: it gets nothing.
            case ignored
        }

        /// The group's id.
        public var groupID: String
        /// The group's type (the first one, when the response repeated the group with another type).
        public var groupType: GroupType
        /// The outcome for the capability in this group.
        public var outcome: Outcome
        /// The grant records of the rules that matched, as ``Decision/grants`` lists them for this
        /// capability and group (one per role entry a role-level rule matched through).
        ///
        /// For ``Outcome-swift.enum/granted``, the grants that survived; for
        /// ``Outcome-swift.enum/denied``, the grants that matched and were overridden; otherwise empty.
        public var grants: [Grant]
        /// For ``Outcome-swift.enum/denied``, the deny rules that removed the capability, as
        /// ``Decision/denials`` lists them; otherwise empty.
        public var denials: [Denial]
        /// For ``Outcome-swift.enum/notGranted``, every grant rule naming the capability, each with the
        /// conditions this group and context do not meet, sorted by the number of unmet conditions, then
        /// by rule order in the policy set; otherwise empty.
        public var nearMisses: [Explanation.NearMiss]

        /// Creates a group's explanation.
        public init(
            groupID: String,
            groupType: GroupType,
            outcome: Outcome,
            grants: [Grant] = [],
            denials: [Denial] = [],
            nearMisses: [Explanation.NearMiss] = []
        ) {
            self.groupID = groupID
            self.groupType = groupType
            self.outcome = outcome
            self.grants = grants
            self.denials = denials
            self.nearMisses = nearMisses
        }
    }
}
