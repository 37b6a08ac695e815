/// Why a capability was removed from a group: a deny rule that matched there while a grant rule
/// would otherwise have granted it.
public struct Denial: Sendable, Hashable {
    /// The capability removed.
    public var capability: String
    /// The group it was removed from.
    public var groupID: String
    /// The deny rule's id (`policy-id/rule-id` in a set of several policies).
    public var rule: String

    /// Creates a denial record.
    public init(capability: String, groupID: String, rule: String) {
        self.capability = capability
        self.groupID = groupID
        self.rule = rule
    }
}
