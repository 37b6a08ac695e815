/// What one group of the response gives the customer.
public struct GroupDecision: Sendable, Hashable {
    /// The group's id.
    public var groupID: String
    /// The group's type (the first one, when a response repeated the group with another type).
    public var groupType: GroupType
    /// The capabilities granted in this group and not denied there.
    public var capabilities: CapabilitySet
}
