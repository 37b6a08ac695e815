/// One member of a group (Apple's `GroupMemberEntry`): only an app transaction id, no role.
public struct GroupMemberEntry: Hashable, Sendable, Codable {
    /// The member's app transaction id (`appTransactionId`).
    public var appTransactionID: String

    /// Creates a member entry.
    public init(appTransactionID: String) {
        self.appTransactionID = appTransactionID
    }

    enum CodingKeys: String, CodingKey {
        case appTransactionID = "appTransactionId"
    }
}
