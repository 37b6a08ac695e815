/// Why a capability survived in a group: one grant rule that granted it there.
public struct Grant: Sendable, Hashable {
    /// The capability granted.
    public var capability: String
    /// The group it was granted in.
    public var groupID: String
    /// The granting rule's id (`policy-id/rule-id` in a set of several policies).
    public var rule: String
    /// For a role-level rule, the product of the role entry it matched through (after sandbox
    /// aliasing); `nil` for a group-level rule.
    public var productID: String?
    /// For a role-level rule, the role of the entry it matched through.
    public var role: Role?
    /// The product id as the sandbox sent it, when an alias replaced it.
    public var sandboxProductID: String?

    /// Creates a grant record.
    public init(
        capability: String,
        groupID: String,
        rule: String,
        productID: String? = nil,
        role: Role? = nil,
        sandboxProductID: String? = nil
    ) {
        self.capability = capability
        self.groupID = groupID
        self.rule = rule
        self.productID = productID
        self.role = role
        self.sandboxProductID = sandboxProductID
    }
}
