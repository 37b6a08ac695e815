/// One group the customer belongs to (Apple's `GroupEntry`).
public struct GroupEntry: Hashable, Sendable, Codable {
    /// The group's identifier, unique within the app (`groupId`).
    public var groupID: String
    /// `ORGANIZATION`, `CONSUMER`, or a value Apple adds later.
    public var groupType: GroupType
    /// One entry per product of the app the group gives the customer.
    ///
    /// Apple sends them for `ORGANIZATION` groups and omits them for `CONSUMER` groups; absent
    /// decodes as empty.
    public var roles: [RoleEntry]

    /// Creates a group entry.
    public init(groupID: String, groupType: GroupType, roles: [RoleEntry] = []) {
        self.groupID = groupID
        self.groupType = groupType
        self.roles = roles
    }

    enum CodingKeys: String, CodingKey {
        case groupID = "groupId"
        case groupType
        case roles
    }

    /// Decodes Apple's shape; a missing or `null` `roles` is an empty list.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        groupID = try container.decode(String.self, forKey: .groupID)
        groupType = try container.decode(GroupType.self, forKey: .groupType)
        roles = try container.decodeIfPresent([RoleEntry].self, forKey: .roles) ?? []
    }

    /// Encodes Apple's shape: `roles` is omitted when empty, as Apple does for `CONSUMER` groups.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(groupID, forKey: .groupID)
        try container.encode(groupType, forKey: .groupType)
        if !roles.isEmpty { try container.encode(roles, forKey: .roles) }
    }
}
