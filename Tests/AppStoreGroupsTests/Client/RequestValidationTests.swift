import Foundation
import ServingTestSupport
import Testing

@testable import AppStoreGroups

/// Ids, limits and tokens are checked before anything is sent: the server's log proves it.
@Suite("Request validation")
struct RequestValidationTests {
    static let invalidIDs = [
        "", "a/b", "/", "..", "../groups", "a%2Fb", "%2F", "a?b", "?limit=1", "a b", " ", "a.b", "a#b", "a\nb",
        "é", String(repeating: "1", count: 129),
    ]

    @Test(
        "invalid ids (for groups, one page or all members), limits outside 1...100 and empty or long tokens never reach the server; the boundary values do",
        .requires(.pythonCryptography)
    )
    func argumentBounds() async throws {
        let server = try await FakeAppStore()
        let client = try server.client()
        for id in Self.invalidIDs {
            let groups = await expectError { try await client.customerGroups(anyTransactionID: id) }
            #expect(groups?.code == .invalidArgument, "\(id)")
            #expect(groups?.attempts == 0)
            #expect(groups?.httpStatus == nil)
            let page = await expectError { try await client.groupMembers(groupID: id) }
            #expect(page?.code == .invalidArgument, "\(id)")
            let all = await expectError { try client.allGroupMembers(groupID: id) }
            #expect(all?.code == .invalidArgument, "\(id)")
        }
        for limit in [0, -1, 101, Int.max, Int.min] {
            let page = await expectError { try await client.groupMembers(groupID: "ok", limit: limit) }
            #expect(page?.code == .invalidArgument, "\(limit)")
            let all = await expectError { try client.allGroupMembers(groupID: "ok", limit: limit) }
            #expect(all?.code == .invalidArgument, "\(limit)")
        }
        let empty = await expectError { try await client.groupMembers(groupID: "ok", paginationToken: "") }
        #expect(empty?.code == .invalidArgument)
        let long = await expectError {
            try await client.groupMembers(groupID: "ok", paginationToken: String(repeating: "t", count: 4097))
        }
        #expect(long?.code == .invalidArgument)
        #expect(try await server.log().isEmpty)
        // The boundary values are accepted.
        let longest = String(repeating: "a", count: 128)
        _ = try await client.customerGroups(anyTransactionID: longest)
        _ = try await client.customerGroups(anyTransactionID: "Az09_-")
        _ = try await client.groupMembers(groupID: "ok", limit: 1)
        _ = try await client.groupMembers(groupID: "ok", limit: 100)
        #expect(
            try await server.log().map(\.path) == [
                "/groups/v1/currentGroups/\(longest)",
                "/groups/v1/currentGroups/Az09_-",
                "/groups/v1/group/ok?limit=1",
                "/groups/v1/group/ok?limit=100",
            ]
        )
    }

    @Test("percent-encoding leaves only unreserved characters")
    func percentEncoding() {
        #expect(RequestValidation.percentEncoded("a1-_.~") == "a1-_.~")
        #expect(RequestValidation.percentEncoded("a/b+c=d&e f%") == "a%2Fb%2Bc%3Dd%26e%20f%25")
        #expect(RequestValidation.percentEncoded("é") == "%C3%A9")
    }
}
