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

    init(
        _ endpoint: Endpoint,
        _ id: String,
        _ code: AppStoreGroupsError.Code,
        _ status: Int,
        _ apiErrorCode: Int64?,
        _ apiErrorMessage: String?,
        _ attempts: Int
    ) {
        (self.endpoint, self.id, self.code, self.status) = (endpoint, id, code, status)
        (self.apiErrorCode, self.apiErrorMessage, self.attempts) = (apiErrorCode, apiErrorMessage, attempts)
    }

    /// The two endpoints, each called the same way by the tests of what both answer.
    enum Endpoint: Sendable {
        case groups, members

        /// Calls the endpoint for `id` (one page of at most five members) and returns how many
        /// groups or members came.
        func call(_ client: AppStoreGroupsClient, _ id: String) async throws -> Int {
            switch self {
            case .groups: try await client.customerGroups(anyTransactionID: id).groups.count
            case .members: try await client.groupMembers(groupID: id, limit: 5).members.count
            }
        }
    }

    var testDescription: String { "\(endpoint) \(id) → \(code)" }
}

/// Every documented error status and code, through the real loopback server, on both endpoints.
@Suite("Error answers", .requires(.pythonCryptography))
struct ErrorAnswerTests {
    static let unknown = "A code this client has never heard of."
    static let retryable = "An unknown error occurred. Please try again."
    static let notFound = "Transaction id not found."
    static let invalidToken = "Invalid pagination token."
    static let expired = "Pagination token expired."
    static let cases: [ErrorCase] = [
        .init(.groups, "invalidTransactionId", .invalidTransactionID, 400, 4_000_006, "Invalid transaction id.", 1),
        .init(.groups, "unauthorized", .unauthorized, 401, nil, nil, 1),
        .init(.groups, "transactionIdNotFound", .transactionIDNotFound, 404, 4_040_010, notFound, 1),
        .init(.groups, "rateLimitExceeded", .rateLimitExceeded, 429, 4_290_000, "Rate limit exceeded.", 3),
        .init(.groups, "generalInternal", .generalInternalError, 500, 5_000_000, "An unknown error occurred.", 3),
        .init(.groups, "generalInternalRetryable", .generalInternalRetryableError, 500, 5_000_001, retryable, 3),
        .init(.groups, "unknownCode", .apiError, 400, 4_000_999, unknown, 1),
        .init(.groups, "html_502", .apiError, 502, nil, nil, 3),
        .init(.groups, "nobody_418", .apiError, 418, nil, nil, 1),
        .init(.groups, "nobody_429", .rateLimitExceeded, 429, nil, nil, 3),
        .init(.members, "invalidGroupId", .invalidGroupID, 400, 4_000_225, "Invalid group id.", 1),
        .init(.members, "invalidLimit", .invalidLimit, 400, 4_000_004, "Invalid limit.", 1),
        .init(.members, "invalidPaginationToken", .invalidPaginationToken, 400, 4_000_014, invalidToken, 1),
        .init(.members, "paginationTokenExpired", .paginationTokenExpired, 400, 4_000_017, expired, 1),
        .init(.members, "unauthorized", .unauthorized, 401, nil, nil, 1),
        .init(.members, "groupNotFound", .groupNotFound, 404, 4_040_022, "Group not found.", 1),
        .init(.members, "rateLimitExceeded", .rateLimitExceeded, 429, 4_290_000, "Rate limit exceeded.", 3),
        .init(.members, "generalInternal", .generalInternalError, 500, 5_000_000, "An unknown error occurred.", 3),
        .init(.members, "generalInternalRetryable", .generalInternalRetryableError, 500, 5_000_001, retryable, 3),
        .init(.members, "unknownCode", .apiError, 400, 4_000_999, unknown, 1),
    ]

    @Test("status, code, message and attempts are exact", arguments: cases)
    func errorAnswer(_ expected: ErrorCase) async throws {
        let server = try await FakeAppStore()
        let time = RecordingTimeSource()
        let client = try server.client(retryPolicy: exactRetries, timeSource: time.timeSource)
        let error = await expectError { try await expected.endpoint.call(client, expected.id) }
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
        "429 with Retry-After past the maximum wait fails at once, carrying the instant",
        arguments: [(ErrorCase.Endpoint.groups, Int64(60_000)), (.members, 120_000)]
    )
    func rateLimitTooFar(endpoint: ErrorCase.Endpoint, milliseconds: Int64) async throws {
        let server = try await FakeAppStore()
        let time = RecordingTimeSource()
        let retryAfter = Int64(Date().timeIntervalSince1970 * 1000) + milliseconds
        let error = await expectError {
            try await endpoint.call(
                try server.client(retryPolicy: exactRetries, timeSource: time.timeSource),
                "ratelimit_\(retryAfter)"
            )
        }
        #expect(error?.code == .rateLimitExceeded)
        #expect(error?.httpStatus == 429)
        #expect(error?.apiErrorCode == 4_290_000)
        #expect(error?.apiErrorMessage == "Rate limit exceeded.")
        #expect(error?.retryAfter == Date(timeIntervalSince1970: Double(retryAfter) / 1000))
        #expect(error?.attempts == 1)
        #expect(time.sleeps == [])
        #expect(try await server.log().count == 1)
    }

    @Test(
        "a malformed 200 is a decoding error carrying the engine's JSON path",
        arguments: [(ErrorCase.Endpoint.groups, "groups[0].groupId"), (.members, "members[0].appTransactionId")]
    )
    func malformedBody(endpoint: ErrorCase.Endpoint, jsonPath: String) async throws {
        let server = try await FakeAppStore()
        let error = await expectError { try await endpoint.call(try server.client(), "malformed") }
        #expect(error?.code == .invalidResponse)
        #expect(error?.httpStatus == 200)
        #expect(error?.jsonPath == jsonPath)
        #expect(error?.attempts == 1)
        #expect(try await server.log().count == 1)
    }
}

/// Apple's error bodies, read without a server.
@Suite("Apple's error bodies")
struct ErrorBodyTests {
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
