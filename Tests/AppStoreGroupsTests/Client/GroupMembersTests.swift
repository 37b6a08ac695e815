import Foundation
import GroupPolicy
import ServingTestSupport
import Synchronization
import Testing

@testable import AppStoreGroups

/// Get Group Members through the real loopback server: every row of Apple's table, and pagination.
@Suite("Get Group Members", .requires(.pythonCryptography))
struct GroupMembersTests {
    @Test("200: one page decodes exactly; limit is sent only when given, no token on the first page")
    func onePage() async throws {
        let server = try await FakeAppStore()
        let page = try await server.client().groupMembers(groupID: "ok", limit: 10)
        let members = ["700000000000000001", "700000000000000002"].map { GroupMemberEntry(appTransactionID: $0) }
        #expect(page == GetGroupMembersResponse(members: members, hasMore: false))
        // Without a limit no query is sent.
        #expect(try await server.client().groupMembers(groupID: "placeholder") == .sandboxPlaceholder)
        let requests = try await server.log()
        #expect(requests.map(\.path) == ["/groups/v1/group/ok?limit=10", "/groups/v1/group/placeholder"])
        #expect(requests.map(\.authorization) == ["ok", "ok"])
    }

    @Test(
        "pagination over three pages keeps limit and passes each token, as pages fetched by hand do; a limit that changes between pages is refused (InvalidLimitError)"
    )
    func threePages() async throws {
        let server = try await FakeAppStore()
        var members: [String] = []
        for try await member in try server.client().allGroupMembers(groupID: "paged", limit: 2) {
            members.append(member.appTransactionID)
        }
        #expect(members == ["a1", "a2", "a3", "a4", "a5"])
        // The paths as sent, each token percent-encoded whole.
        let tokens = ["", "&paginationToken=page2-token", "&paginationToken=page3%2Ftoken%2B%3D%26x"]
        #expect(try await server.log().map(\.path) == tokens.map { "/groups/v1/group/paged?limit=2\($0)" })
        // Pages fetched one at a time by hand match the sequence.
        let client = try server.client()
        let first = try await client.groupMembers(groupID: "paged", limit: 2)
        #expect(first.hasMore)
        #expect(first.paginationToken == "page2-token")
        let second = try await client.groupMembers(groupID: "paged", limit: 2, paginationToken: first.paginationToken)
        #expect(second.members.map(\.appTransactionID) == ["a3", "a4"])
        #expect(second.paginationToken == "page3/token+=&x")
        let changed = await expectError {
            try await client.groupMembers(groupID: "paged", limit: 3, paginationToken: first.paginationToken)
        }
        #expect(changed?.code == .invalidLimit)
        #expect(changed?.apiErrorCode == 4_000_004)
    }

    @Test("PaginationTokenExpiredError 4000017 ends the sequence with its error")
    func expiredToken() async throws {
        let server = try await FakeAppStore()
        var members: [String] = []
        let error = await expectError {
            for try await member in try server.client().allGroupMembers(groupID: "expiring", limit: 2) {
                members.append(member.appTransactionID)
            }
        }
        #expect(members == ["a1", "a2"])
        #expect(error?.code == .paginationTokenExpired)
        #expect(error?.httpStatus == 400)
        #expect(error?.apiErrorCode == 4_000_017)
        #expect(error?.apiErrorMessage == "Pagination token expired.")
        #expect(error?.attempts == 1)
        #expect(try await server.log().count == 2)
    }

    @Test(
        "a paginationToken sent before (twice in a row, or a cycle A, B, A) stops the sequence at the first repeat",
        arguments: [
            ("loop", ["a1"], 2, ["/groups/v1/group/loop", "/groups/v1/group/loop?paginationToken=same"]),
            (
                "cycle", ["c-first", "c-token-a"], 3,
                [
                    "/groups/v1/group/cycle", "/groups/v1/group/cycle?paginationToken=token-a",
                    "/groups/v1/group/cycle?paginationToken=token-b",
                ]
            ),
        ]
    )
    func repeatedToken(groupID: String, expected: [String], page: Int, paths: [String]) async throws {
        let server = try await FakeAppStore()
        var members: [String] = []
        let error = await expectError {
            for try await member in try server.client().allGroupMembers(groupID: groupID) {
                members.append(member.appTransactionID)
            }
        }
        #expect(error?.code == .invalidResponse)
        #expect(error?.jsonPath == "paginationToken")
        #expect(
            error?.description
                == "the App Store sent a paginationToken it had sent before (page \(page) repeats an earlier one), "
                + "so the listing would never end (HTTP 200, at paginationToken)"
        )
        #expect(members == expected)
        #expect(try await server.log().map(\.path) == paths)
    }

    @Test("500 then 200 inside a sequence: the page is retried with its limit and the listing completes")
    func retryInsideSequence() async throws {
        let server = try await FakeAppStore()
        let time = RecordingTimeSource()
        var members: [String] = []
        let client = try server.client(retryPolicy: exactRetries, timeSource: time.timeSource)
        for try await member in try client.allGroupMembers(groupID: "flaky_generalInternalRetryable_1", limit: 7) {
            members.append(member.appTransactionID)
        }
        #expect(members == ["700000000000000001", "700000000000000002"])
        #expect(time.sleeps == [.milliseconds(500)])
        #expect(try await server.log().map { $0.query["limit"] } == [["7"], ["7"]])
    }
}

/// The listing's own bound, without a server.
@Suite("Group member listing limit")
struct GroupMemberLimitTests {
    @Test("a listing that never ends stops at the documented page limit")
    func pageLimit() async throws {
        // A thousand round trips to the Python server take most of a minute on a loaded machine,
        // so this listing is served in process: a new token on every page, forever.
        final class EndlessPages: HTTPTransport {
            let requests = Mutex(0)

            func send(_ request: HTTPRequest) async throws -> HTTPResponse {
                let number = requests.withLock {
                    $0 += 1
                    return $0
                }
                let body =
                    #"{"members":[{"appTransactionId":"e\#(number)"}],"hasMore":true,"#
                    + #""paginationToken":"page-\#(number + 1)"}"#
                return HTTPResponse(status: 200, body: Array(body.utf8))
            }
        }
        let transport = EndlessPages()
        let client = try AppStoreGroupsClient(
            server: .custom(baseURL: try #require(URL(string: "http://127.0.0.1:9"))),
            credentials: FakeAppStore.credentials(),
            transport: transport
        )
        var count = 0
        let error = await expectError {
            for try await _ in try client.allGroupMembers(groupID: "endless") { count += 1 }
        }
        #expect(error?.code == .responseTooLarge)
        #expect(error?.message == "the group's members fill more than 1000 pages; the listing stops there")
        #expect(GroupMemberSequence.maximumPages == 1_000)
        #expect(count == 999)
        #expect(transport.requests.withLock { $0 } == 1_000)
    }
}
