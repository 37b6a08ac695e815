/// One page of Apple's Get Group Members answer.
public struct GetGroupMembersResponse: Hashable, Sendable, Codable {
    /// The members on this page.
    public var members: [GroupMemberEntry]
    /// Whether more members follow on another page.
    public var hasMore: Bool
    /// The token for the next page; present only when ``hasMore`` is true.
    public var paginationToken: String?

    /// Creates a page.
    public init(members: [GroupMemberEntry], hasMore: Bool, paginationToken: String? = nil) {
        self.members = members
        self.hasMore = hasMore
        self.paginationToken = paginationToken
    }

    /// Apple's documented answer for the sandbox placeholder group, exactly.
    public static let sandboxPlaceholder = GetGroupMembersResponse(
        members: [GroupMemberEntry(appTransactionID: "700000000000000000")],
        hasMore: false
    )
}
