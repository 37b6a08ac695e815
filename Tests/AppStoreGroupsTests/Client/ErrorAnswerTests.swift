import Foundation
import ServingTestSupport
import Testing

@testable import AppStoreGroups

/// One answer the fake server sends that the client will not use, and what the client must make of it.
struct ErrorCase: Sendable, CustomTestStringConvertible {
    var endpoint: Endpoint
    /// The id asked for; `{in N}` in it stands for the instant N milliseconds from now.
    var id: String
    var code: AppStoreGroupsError.Code
    var status: Int?
    var apiErrorCode: Int64?
    var apiErrorMessage: String?
    var attempts: Int
    /// The error's JSON path and message, where a row pins them.
    var jsonPath: String?
    var message: String?

    init(
        _ endpoint: Endpoint,
        _ id: String,
        _ code: AppStoreGroupsError.Code,
        _ status: Int?,
        _ apiErrorCode: Int64?,
        _ apiErrorMessage: String?,
        _ attempts: Int,
        jsonPath: String? = nil,
        message: String? = nil
    ) {
        (self.endpoint, self.id, self.code, self.status) = (endpoint, id, code, status)
        (self.apiErrorCode, self.apiErrorMessage, self.attempts) = (apiErrorCode, apiErrorMessage, attempts)
        (self.jsonPath, self.message) = (jsonPath, message)
    }

    /// The two endpoints, each called the same way by the tests of what both answer.
    enum Endpoint: Sendable {
        case groups, members

        /// Calls the endpoint for `id` (one page of at most five members) and returns how many groups or members came.
        func call(_ client: AppStoreGroupsClient, _ id: String) async throws -> Int {
            switch self {
            case .groups: try await client.customerGroups(anyTransactionID: id).groups.count
            case .members: try await client.groupMembers(groupID: id, limit: 5).members.count
            }
        }

        /// The path the client asks for `id`.
        func path(_ id: String) -> String {
            switch self {
            case .groups: "/groups/v1/currentGroups/\(id)"
            case .members: "/groups/v1/group/\(id)?limit=5"
            }
        }
    }

    var testDescription: String { "\(endpoint) \(id) → \(code)" }
}

/// Every documented error status and code, and every other answer the client will not use (a
/// malformed or oversized body, a truncated one, a redirect), through the real loopback server.
@Suite("Error answers", .requires(.pythonCryptography))
struct ErrorAnswerTests {
    static let unknown = "A code this client has never heard of."
    static let retryable = "An unknown error occurred. Please try again."
    static let notFound = "Transaction id not found."
    static let invalidToken = "Invalid pagination token."
    static let expired = "Pagination token expired."
    static let rateLimited = "Rate limit exceeded."
    static let tooLarge = "the answer's body is larger than 1048576 bytes"
    static let notJSON = "the body is not JSON: invalid literal (expected true, false or null) at line 1, column 1"
    static let cases: [ErrorCase] = [
        .init(.groups, "invalidTransactionId", .invalidTransactionID, 400, 4_000_006, "Invalid transaction id.", 1),
        .init(.groups, "unauthorized", .unauthorized, 401, nil, nil, 1),
        .init(.groups, "transactionIdNotFound", .transactionIDNotFound, 404, 4_040_010, notFound, 1),
        .init(.groups, "rateLimitExceeded", .rateLimitExceeded, 429, 4_290_000, rateLimited, 3),
        // A Retry-After past the maximum wait (30 s) fails at once, carrying the instant.
        .init(.groups, "ratelimit_{in 60000}", .rateLimitExceeded, 429, 4_290_000, rateLimited, 1),
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
        .init(.members, "rateLimitExceeded", .rateLimitExceeded, 429, 4_290_000, rateLimited, 3),
        .init(.members, "ratelimit_{in 120000}", .rateLimitExceeded, 429, 4_290_000, rateLimited, 1),
        .init(.members, "generalInternal", .generalInternalError, 500, 5_000_000, "An unknown error occurred.", 3),
        .init(.members, "generalInternalRetryable", .generalInternalRetryableError, 500, 5_000_001, retryable, 3),
        .init(.members, "unknownCode", .apiError, 400, 4_000_999, unknown, 1),
        // A malformed 200 is a decoding error carrying the engine's JSON path.
        .init(.groups, "malformed", .invalidResponse, 200, nil, nil, 1, jsonPath: "groups[0].groupId"),
        .init(.members, "malformed", .invalidResponse, 200, nil, nil, 1, jsonPath: "members[0].appTransactionId"),
        .init(.members, "tokenless", .invalidResponse, 200, nil, nil, 1, jsonPath: "paginationToken"),
        // Not "expected an object, found a boolean": the body starts with a `t`, but is not JSON.
        .init(.groups, "notjson", .invalidResponse, 200, nil, nil, 1, jsonPath: "$", message: notJSON),
        // A body over 1 MiB, announced by Content-Length (up to 10^23) or not, is rejected at once:
        // a client that waited for the body would time out instead.
        .init(.groups, "oversized", .responseTooLarge, nil, nil, nil, 1, message: tooLarge),
        .init(.groups, "hugelength", .responseTooLarge, nil, nil, nil, 1, message: tooLarge),
        .init(.members, "oversizedclose", .responseTooLarge, nil, nil, nil, 1, message: tooLarge),
        // A truncated body is a transport failure, retried.
        .init(.groups, "truncated", .transportFailure, nil, nil, nil, 3),
        // A redirect is never followed: the log would show a request to localhost.
        .init(.groups, "redirect", .unexpectedRedirect, 302, nil, nil, 1),
    ]

    @Test("code, status, Apple's code and message, attempts, waits and requests are exact", arguments: cases)
    func errorAnswer(_ expected: ErrorCase) async throws {
        let server = try await FakeAppStore()
        let time = RecordingTimeSource()
        let client = try server.client(retryPolicy: exactRetries, timeSource: time.timeSource)
        var id = expected.id
        var retryAfter: Date?
        if let match = id.firstMatch(of: /\{in ([0-9]+)\}/), let milliseconds = Int64(match.1) {
            let instant = Int64(Date().timeIntervalSince1970 * 1000) + milliseconds
            id = id.replacing(match.0, with: "\(instant)")
            retryAfter = Date(timeIntervalSince1970: Double(instant) / 1000)
        }
        let error = await expectError { try await expected.endpoint.call(client, id) }
        #expect(error?.code == expected.code)
        #expect(error?.httpStatus == expected.status)
        #expect(error?.apiErrorCode == expected.apiErrorCode)
        #expect(error?.apiErrorMessage == expected.apiErrorMessage)
        #expect(error?.attempts == expected.attempts)
        #expect(error?.retryAfter == retryAfter)
        #expect(error?.isErrorAnswer == (400..<600).contains(expected.status ?? 0))
        if let jsonPath = expected.jsonPath { #expect(error?.jsonPath == jsonPath) }
        if let message = expected.message { #expect(error?.message == message) }
        // Retried answers without a Retry-After back off exponentially; the others never wait.
        let waits: [Duration] = expected.attempts == 3 ? [.milliseconds(500), .seconds(1)] : []
        #expect(time.sleeps == waits)
        let requests = try await server.log(count: expected.attempts)
        #expect(requests.map(\.path) == Array(repeating: expected.endpoint.path(id), count: expected.attempts))
        #expect(requests.map(\.host) == Array(repeating: "127.0.0.1:\(server.port)", count: expected.attempts))
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
    }
}
