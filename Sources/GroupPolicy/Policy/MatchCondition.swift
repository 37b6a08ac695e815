/// A rule's, workspace's or invariant's `match`.
package struct MatchCondition: Sendable, Equatable {
    package var groupTypes: ValueCondition?
    package var groupIDs: ValueCondition?
    package var productIDs: ValueCondition?
    package var roles: ValueCondition?

    static let everything = MatchCondition()

    /// A match with `productId` or `role` holds per role entry; one without holds per group.
    package var isRoleLevel: Bool { productIDs != nil || roles != nil }
}
