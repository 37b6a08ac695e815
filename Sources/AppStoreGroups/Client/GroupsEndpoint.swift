/// One of Apple's groups endpoints, as far as rate limits go: Apple counts and limits each
/// endpoint separately.
public struct GroupsEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The endpoint's name in store keys and log lines, such as `customer-groups`.
    public let name: String

    private init(name: String) {
        self.name = name
    }

    /// Get Customer Groups, `GET /groups/v1/currentGroups/{anyTransactionId}`.
    public static let customerGroups = GroupsEndpoint(name: "customer-groups")
    /// Get Group Members, `GET /groups/v1/group/{groupId}`.
    public static let groupMembers = GroupsEndpoint(name: "group-members")

    /// The endpoint's name.
    public var description: String { name }
}
