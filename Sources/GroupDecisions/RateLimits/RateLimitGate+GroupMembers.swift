public import AppStoreGroups
import GroupPolicy

extension RateLimitGate {
    /// Every member of a group, each page requested through this gate as Get Group Members: with
    /// that endpoint's budget, and its 429s holding that endpoint only.
    ///
    /// The same listing as `AppStoreGroupsClient.allGroupMembers(groupID:limit:)`, with the same
    /// bounds, in the client's environment.
    ///
    /// - Parameters:
    ///   - groupID: The group's id: 1 to 128 characters of `A-Z a-z 0-9 _ -`.
    ///   - limit: The most members per page, 1 to 100, or `nil` to send none.
    ///   - client: The client that sends the requests.
    /// - Returns: The members, lazily.
    /// - Throws: `AppStoreGroupsError.Code.invalidArgument` for a bad id or limit, before any
    ///   request.
    public func allGroupMembers(
        groupID: String,
        limit: Int? = nil,
        using client: AppStoreGroupsClient
    ) throws(AppStoreGroupsError) -> GroupMemberSequence {
        let members = try client.allGroupMembers(groupID: groupID, limit: limit)
        return GroupMemberSequence(groupID: groupID, limit: limit) { token throws(AppStoreGroupsError) in
            try await self.send(.groupMembers, in: client.storeEnvironment) { () throws(AppStoreGroupsError) in
                try await members.fetchPage(token)
            }
        }
    }
}
