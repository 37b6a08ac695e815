public import GroupPolicy

/// Every member of a group, fetched one Get Group Members page at a time as it is iterated.
///
/// Made by ``AppStoreGroupsClient/allGroupMembers(groupID:limit:)``. Each iteration starts from the
/// first page. Every page is requested with the same `limit` and the previous page's
/// `paginationToken`, until a page says `hasMore` is false.
///
/// Iteration always ends: a `paginationToken` that comes back (a cycle of any length, `A, B, A`)
/// throws ``AppStoreGroupsError/Code/invalidResponse``, and a listing that would need more than
/// ``maximumPages`` pages throws ``AppStoreGroupsError/Code/responseTooLarge``.
///
/// ```swift
/// for try await member in try client.allGroupMembers(groupID: groupID, limit: 100) {
///     print(member.appTransactionID)
/// }
/// ```
public struct GroupMemberSequence: AsyncSequence, Sendable {
    /// A member.
    public typealias Element = GroupMemberEntry
    /// What iteration throws.
    public typealias Failure = AppStoreGroupsError

    /// Fetches one page: the token of the page before, or `nil` for the first.
    package typealias FetchPage =
        @Sendable (_ paginationToken: String?) async throws(AppStoreGroupsError) -> GetGroupMembersResponse

    package let fetchPage: FetchPage
    /// The group whose members this lists.
    public let groupID: String
    /// The page size sent on every request, or `nil` when none is sent.
    public let limit: Int?

    /// A listing whose pages come from the client.
    init(client: AppStoreGroupsClient, groupID: String, limit: Int?) {
        self.init(groupID: groupID, limit: limit) { token throws(AppStoreGroupsError) in
            try await client.groupMembers(groupID: groupID, limit: limit, paginationToken: token)
        }
    }

    /// A listing whose pages come from `fetchPage` (the client's, through a rate-limit gate).
    package init(groupID: String, limit: Int?, fetchPage: @escaping FetchPage) {
        self.groupID = groupID
        self.limit = limit
        self.fetchPage = fetchPage
    }

    /// The most pages one iteration fetches: 1,000, which is 100,000 members at Apple's largest
    /// page of 100.
    public static let maximumPages = 1_000

    /// Starts an iteration at the first page.
    ///
    /// - Returns: A new iterator.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(fetchPage: fetchPage)
    }

    /// The same listing a page at a time, each page as Apple answered it, with the same bounds.
    ///
    /// For a caller that handles each page as it arrives (prints it, stores it) and so holds one
    /// page at a time rather than the whole listing.
    public var pages: Pages { Pages(fetchPage: fetchPage) }

    /// A group's member listing as its pages; see ``GroupMemberSequence/pages``.
    public struct Pages: AsyncSequence, Sendable {
        /// A page.
        public typealias Element = GetGroupMembersResponse
        /// What iteration throws.
        public typealias Failure = AppStoreGroupsError

        let fetchPage: FetchPage

        /// Starts an iteration at the first page.
        ///
        /// - Returns: A new iterator.
        public func makeAsyncIterator() -> PageIterator {
            PageIterator(fetchPage: fetchPage)
        }
    }

    /// Fetches one page after the other, following each page's `paginationToken`.
    public struct PageIterator: AsyncIteratorProtocol {
        /// A page.
        public typealias Element = GetGroupMembersResponse
        /// What iteration throws.
        public typealias Failure = AppStoreGroupsError

        private let fetchPage: FetchPage
        private var nextToken: String?
        private var finished = false
        private var pages = 0
        /// Every token followed so far, so a cycle is caught at its first repeat.
        private var tokens: Set<String> = []

        init(fetchPage: @escaping FetchPage) {
            self.fetchPage = fetchPage
        }

        /// The next page; `nil` after the page that says `hasMore` is false.
        ///
        /// - Returns: The next page, or `nil` at the end.
        /// - Throws: ``AppStoreGroupsError`` when a page fails, repeats a token or would pass
        ///   ``GroupMemberSequence/maximumPages``; the iteration then ends.
        public mutating func next() async throws(AppStoreGroupsError) -> GetGroupMembersResponse? {
            guard !finished else { return nil }
            let page: GetGroupMembersResponse
            do {
                page = try await fetchPage(nextToken)
            } catch {
                finished = true
                throw error
            }
            pages += 1
            if page.hasMore, let token = page.paginationToken {
                guard tokens.insert(token).inserted else {
                    finished = true
                    throw AppStoreGroupsError(
                        code: .invalidResponse,
                        message: "the App Store sent a paginationToken it had sent before (page \(pages) "
                            + "repeats an earlier one), so the listing would never end",
                        httpStatus: 200,
                        jsonPath: "paginationToken"
                    )
                }
                guard pages < GroupMemberSequence.maximumPages else {
                    finished = true
                    throw AppStoreGroupsError(
                        code: .responseTooLarge,
                        message: "the group's members fill more than \(GroupMemberSequence.maximumPages) pages; "
                            + "the listing stops there"
                    )
                }
                nextToken = token
            } else {
                finished = true
            }
            return page
        }
    }

    /// Fetches pages as the members of the previous one run out.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// A member.
        public typealias Element = GroupMemberEntry
        /// What iteration throws.
        public typealias Failure = AppStoreGroupsError

        private var pages: PageIterator
        private var buffered: [GroupMemberEntry] = []
        private var nextIndex = 0

        init(fetchPage: @escaping FetchPage) {
            pages = PageIterator(fetchPage: fetchPage)
        }

        /// The next member, fetching the next page when needed; `nil` after the last page.
        ///
        /// - Returns: The next member, or `nil` at the end.
        /// - Throws: ``AppStoreGroupsError`` when a page fails; the iteration then ends.
        public mutating func next() async throws(AppStoreGroupsError) -> GroupMemberEntry? {
            while nextIndex == buffered.count {
                guard let page = try await pages.next() else { return nil }
                buffered = page.members
                nextIndex = 0
            }
            defer { nextIndex += 1 }
            return buffered[nextIndex]
        }
    }
}
