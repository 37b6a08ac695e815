import Foundation
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups

/// One error answer the fake server sends, and what the client must make of it.
struct ErrorCase: Sendable, CustomTestStringConvertible {
    var endpoint: Endpoint
    var id: String
    var code: AppStoreGroupsError.Code
    var status: Int
    var apiErrorCode: Int64?
    var apiErrorMessage: String?
    var attempts: Int

    enum Endpoint: Sendable { case groups, members }

    var testDescription: String { "\(endpoint) \(id) → \(code)" }
}

/// Every documented error status and code, through the real loopback server, on both endpoints.
@Suite("Error answers")
struct ErrorAnswerTests {
    static let cases: [ErrorCase] = [
        // Get Customer Groups
        .init(
            endpoint: .groups,
            id: "invalidTransactionId",
            code: .invalidTransactionID,
            status: 400,
            apiErrorCode: 4_000_006,
            apiErrorMessage: "Invalid transaction id.",
            attempts: 1
        ),
        .init(
            endpoint: .groups,
            id: "unauthorized",
            code: .unauthorized,
            status: 401,
            apiErrorCode: nil,
            apiErrorMessage: nil,
            attempts: 1
        ),
        .init(
            endpoint: .groups,
            id: "transactionIdNotFound",
            code: .transactionIDNotFound,
            status: 404,
            apiErrorCode: 4_040_010,
            apiErrorMessage: "Transaction id not found.",
            attempts: 1
        ),
        .init(
            endpoint: .groups,
            id: "rateLimitExceeded",
            code: .rateLimitExceeded,
            status: 429,
            apiErrorCode: 4_290_000,
            apiErrorMessage: "Rate limit exceeded.",
            attempts: 3
        ),
        .init(
            endpoint: .groups,
            id: "generalInternal",
            code: .generalInternalError,
            status: 500,
            apiErrorCode: 5_000_000,
            apiErrorMessage: "An unknown error occurred.",
            attempts: 3
        ),
        .init(
            endpoint: .groups,
            id: "generalInternalRetryable",
            code: .generalInternalRetryableError,
            status: 500,
            apiErrorCode: 5_000_001,
            apiErrorMessage: "An unknown error occurred. Please try again.",
            attempts: 3
        ),
        .init(
            endpoint: .groups,
            id: "unknownCode",
            code: .apiError,
            status: 400,
            apiErrorCode: 4_000_999,
            apiErrorMessage: "A code this client has never heard of.",
            attempts: 1
        ),
        .init(
            endpoint: .groups,
            id: "html_502",
            code: .apiError,
            status: 502,
            apiErrorCode: nil,
            apiErrorMessage: nil,
            attempts: 3
        ),
        .init(
            endpoint: .groups,
            id: "nobody_418",
            code: .apiError,
            status: 418,
            apiErrorCode: nil,
            apiErrorMessage: nil,
            attempts: 1
        ),
        .init(
            endpoint: .groups,
            id: "nobody_429",
            code: .rateLimitExceeded,
            status: 429,
            apiErrorCode: nil,
            apiErrorMessage: nil,
            attempts: 3
        ),
        // Get Group Members
        .init(
            endpoint: .members,
            id: "invalidGroupId",
            code: .invalidGroupID,
            status: 400,
            apiErrorCode: 4_000_225,
            apiErrorMessage: "Invalid group id.",
            attempts: 1
        ),
        .init(
            endpoint: .members,
            id: "invalidLimit",
            code: .invalidLimit,
            status: 400,
            apiErrorCode: 4_000_004,
            apiErrorMessage: "Invalid limit.",
            attempts: 1
        ),
        .init(
            endpoint: .members,
            id: "invalidPaginationToken",
            code: .invalidPaginationToken,
            status: 400,
            apiErrorCode: 4_000_014,
            apiErrorMessage: "Invalid pagination token.",
            attempts: 1
        ),
        .init(
            endpoint: .members,
            id: "paginationTokenExpired",
            code: .paginationTokenExpired,
            status: 400,
            apiErrorCode: 4_000_017,
            apiErrorMessage: "Pagination token expired.",
            attempts: 1
        ),
        .init(
            endpoint: .members,
            id: "unauthorized",
            code: .unauthorized,
            status: 401,
            apiErrorCode: nil,
            apiErrorMessage: nil,
            attempts: 1
        ),
        .init(
            endpoint: .members,
            id: "groupNotFound",
            code: .groupNotFound,
            status: 404,
            apiErrorCode: 4_040_022,
            apiErrorMessage: "Group not found.",
            attempts: 1
        ),
        .init(
            endpoint: .members,
            id: "rateLimitExceeded",
            code: .rateLimitExceeded,
            status: 429,
            apiErrorCode: 4_290_000,
            apiErrorMessage: "Rate limit exceeded.",
            attempts: 3
        ),
        .init(
            endpoint: .members,
            id: "generalInternal",
            code: .generalInternalError,
            status: 500,
            apiErrorCode: 5_000_000,
            apiErrorMessage: "An unknown error occurred.",
            attempts: 3
        ),
        .init(
            endpoint: .members,
            id: "generalInternalRetryable",
            code: .generalInternalRetryableError,
            status: 500,
            apiErrorCode: 5_000_001,
            apiErrorMessage: "An unknown error occurred. Please try again.",
            attempts: 3
        ),
        .init(
            endpoint: .members,
            id: "unknownCode",
            code: .apiError,
            status: 400,
            apiErrorCode: 4_000_999,
            apiErrorMessage: "A code this client has never heard of.",
            attempts: 1
        ),
    ]

    @Test("status, code, message and attempts are exact", .requires(.pythonCryptography), arguments: cases)
    func errorAnswer(_ expected: ErrorCase) async throws {
        let server = try await FakeAppStore()
        let time = RecordingTimeSource()
        let client = try server.client(retryPolicy: exactRetries, timeSource: time.timeSource)
        let error = await expectError { () async throws -> Int in
            switch expected.endpoint {
            case .groups: try await client.customerGroups(anyTransactionID: expected.id).groups.count
            case .members: try await client.groupMembers(groupID: expected.id, limit: 5).members.count
            }
        }
        #expect(error?.code == expected.code)
        #expect(error?.httpStatus == expected.status)
        #expect(error?.apiErrorCode == expected.apiErrorCode)
        #expect(error?.apiErrorMessage == expected.apiErrorMessage)
        #expect(error?.attempts == expected.attempts)
        #expect(error?.isErrorAnswer == true)
        // Retried answers without a Retry-After back off exponentially; the others never wait.
        let waits: [Duration] = expected.attempts == 3 ? [.milliseconds(500), .seconds(1)] : []
        #expect(time.sleeps == waits)
        #expect(try await server.log().count == expected.attempts)
    }

    @Test(
        "429 with a Retry-After that is not a UNIX time in milliseconds backs off like a 500",
        .requires(.pythonCryptography)
    )
    func garbageRetryAfter() async throws {
        // "none" sends no header; "1700000000" is seconds, not milliseconds.
        for header in ["none", "soon", "5", "1700000000", "-1", "99999999999999999999"] {
            let server = try await FakeAppStore()
            let time = RecordingTimeSource()
            let id = "ratelimitraw_\(header)_1"
            let client = try server.client(retryPolicy: exactRetries, timeSource: time.timeSource)
            let response = try await client.customerGroups(anyTransactionID: id)
            #expect(response == .sandboxPlaceholder)
            #expect(time.sleeps == [.milliseconds(500)], "Retry-After \(header)")
            #expect(try await server.log().count == 2)
        }
    }

    @Test("descriptions name the status, Apple's code and name, and Apple's message")
    func description() {
        let error = APIErrorBody.error(
            status: 404,
            body: Array(#"{"errorCode":4040022,"errorMessage":"Group not found."}"#.utf8),
            attempts: 1
        )
        #expect(
            error.description
                == #"the App Store answered GroupNotFoundError (HTTP 404, errorCode 4040022, "#
                + #"errorMessage "Group not found.")"#
        )
    }

    @Test("Apple's error body is read leniently")
    func lenientBody() {
        #expect(APIErrorBody(bytes: []) == nil)
        #expect(APIErrorBody(bytes: Array("<html>".utf8)) == nil)
        #expect(APIErrorBody(bytes: Array("{}".utf8)) == nil)
        let largest = APIErrorBody(bytes: Array(#"{"errorCode":9223372036854775807}"#.utf8))
        #expect(largest?.errorCode == .max)
        #expect(largest?.errorMessage == nil)
        let unknown = APIErrorBody.error(status: 400, body: Array(#"{"errorCode":4000999}"#.utf8), attempts: 1)
        #expect(unknown.code == .apiError)
        #expect(unknown.apiErrorCode == 4_000_999)
    }
}
