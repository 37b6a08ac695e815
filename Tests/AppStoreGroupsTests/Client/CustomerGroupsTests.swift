import Foundation
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups

/// Get Customer Groups through the real loopback server: every row of Apple's table.
@Suite("Get Customer Groups")
struct CustomerGroupsTests {
    @Test("200: the body decodes exactly, with one signed request", .requires(.pythonCryptography))
    func success() async throws {
        let server = try await FakeAppStore()
        let client = try server.client()
        let response = try await client.customerGroups(anyTransactionID: "ok")
        #expect(response == .sandboxPlaceholder)
        let requests = try await server.log()
        #expect(requests.count == 1)
        #expect(requests.first?.path == "/groups/v1/currentGroups/ok")
        #expect(requests.first?.query == [:])
        #expect(requests.first?.authorization == "ok")
    }

    @Test("200: an empty groups list", .requires(.pythonCryptography))
    func emptyGroups() async throws {
        let server = try await FakeAppStore()
        let response = try await server.client().customerGroups(anyTransactionID: "empty")
        #expect(response == GetCustomerGroupsResponse(groups: []))
    }

    @Test("every attempt carries a fresh token", .requires(.pythonCryptography))
    func freshTokenPerAttempt() async throws {
        let server = try await FakeAppStore()
        let time = RecordingTimeSource()
        _ = try await server.client(retryPolicy: exactRetries, timeSource: time.timeSource)
            .customerGroups(anyTransactionID: "flaky_generalInternal_2")
        let tokens = try await server.log().compactMap(\.token)
        #expect(tokens.count == 3)
        #expect(Set(tokens).count == 3)
    }

    @Test("400 InvalidTransactionIdError 4000006 is not retried", .requires(.pythonCryptography))
    func invalidTransactionID() async throws {
        let server = try await FakeAppStore()
        let error = await expectError {
            try await server.client().customerGroups(anyTransactionID: "invalidTransactionId")
        }
        #expect(error?.code == .invalidTransactionID)
        #expect(error?.httpStatus == 400)
        #expect(error?.apiErrorCode == 4_000_006)
        #expect(error?.apiErrorMessage == "Invalid transaction id.")
        #expect(error?.attempts == 1)
        #expect(try await server.log().count == 1)
    }

    @Test(
        "401 from a token the server cannot verify is its own kind and is not retried",
        .requires(.pythonCryptography)
    )
    func unauthorizedBySignature() async throws {
        let server = try await FakeAppStore()
        let error = await expectError {
            try await server.client(key: "other-key.p8").customerGroups(anyTransactionID: "ok")
        }
        #expect(error?.code == .unauthorized)
        #expect(error?.httpStatus == 401)
        #expect(error?.apiErrorCode == nil)
        #expect(error?.apiErrorMessage == nil)
        #expect(error?.attempts == 1)
        let requests = try await server.log()
        #expect(requests.map(\.authorization) == ["bad signature"])
    }

    @Test("401 without a body, whatever the token", .requires(.pythonCryptography))
    func unauthorized() async throws {
        let server = try await FakeAppStore()
        let error = await expectError { try await server.client().customerGroups(anyTransactionID: "unauthorized") }
        #expect(error?.code == .unauthorized)
        #expect(error?.httpStatus == 401)
        #expect(error?.attempts == 1)
        #expect(try await server.log().count == 1)
    }

    @Test("404 TransactionIdNotFoundError 4040010 is not retried", .requires(.pythonCryptography))
    func transactionIDNotFound() async throws {
        let server = try await FakeAppStore()
        let error = await expectError {
            try await server.client().customerGroups(anyTransactionID: "transactionIdNotFound")
        }
        #expect(error?.code == .transactionIDNotFound)
        #expect(error?.httpStatus == 404)
        #expect(error?.apiErrorCode == 4_040_010)
        #expect(error?.apiErrorMessage == "Transaction id not found.")
        #expect(error?.attempts == 1)
        #expect(try await server.log().count == 1)
    }

    @Test("429 RateLimitExceededError 4290000: waits until Retry-After, then succeeds", .requires(.pythonCryptography))
    func rateLimitThenSuccess() async throws {
        let server = try await FakeAppStore()
        let now = Date()
        let nowMilliseconds = Int64((now.timeIntervalSince1970 * 1000).rounded())
        let time = RecordingTimeSource(fixedNow: Date(timeIntervalSince1970: Double(nowMilliseconds) / 1000))
        let id = "ratelimit_\(nowMilliseconds + 5_000)_1"
        let response = try await server.client(retryPolicy: exactRetries, timeSource: time.timeSource)
            .customerGroups(anyTransactionID: id)
        #expect(response == .sandboxPlaceholder)
        #expect(time.sleeps == [.milliseconds(5_000)])
        #expect(try await server.log().count == 2)
    }

    @Test(
        "429 with Retry-After past the maximum wait fails at once, carrying the instant",
        .requires(.pythonCryptography)
    )
    func rateLimitTooFar() async throws {
        let server = try await FakeAppStore()
        let time = RecordingTimeSource()
        let retryAfter = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
        let error = await expectError {
            try await server.client(retryPolicy: exactRetries, timeSource: time.timeSource)
                .customerGroups(anyTransactionID: "ratelimit_\(retryAfter)")
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
        "429 every time: three attempts, each wait up to Retry-After, then the rate-limit error",
        .requires(.pythonCryptography)
    )
    func rateLimitExhausted() async throws {
        let server = try await FakeAppStore()
        let nowMilliseconds = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        let time = RecordingTimeSource(fixedNow: Date(timeIntervalSince1970: Double(nowMilliseconds) / 1000))
        let error = await expectError {
            try await server.client(retryPolicy: exactRetries, timeSource: time.timeSource)
                .customerGroups(anyTransactionID: "ratelimit_\(nowMilliseconds + 1_500)")
        }
        #expect(error?.code == .rateLimitExceeded)
        #expect(error?.attempts == 3)
        #expect(error?.retryAfter == Date(timeIntervalSince1970: Double(nowMilliseconds + 1_500) / 1000))
        #expect(time.sleeps == [.milliseconds(1_500), .milliseconds(1_500)])
        #expect(try await server.log().count == 3)
    }

    @Test(
        "429 with a real short wait: the retry reaches the server no earlier than Retry-After",
        .requires(.pythonCryptography)
    )
    func rateLimitRealWait() async throws {
        let server = try await FakeAppStore()
        let retryAfter = Int64(Date().timeIntervalSince1970 * 1000) + 400
        let started = ContinuousClock.now
        let response = try await server.client().customerGroups(anyTransactionID: "ratelimit_\(retryAfter)_1")
        let elapsed = ContinuousClock.now - started
        #expect(response == .sandboxPlaceholder)
        let requests = try await server.log()
        #expect(requests.count == 2)
        #expect(try #require(requests.last).timeMs >= retryAfter)
        #expect(elapsed >= .milliseconds(300))
        // Only rules out a hang: under two busy loops beside a full CI run this took 18.8 s.
        #expect(elapsed < .seconds(120))
    }

    @Test("500 GeneralInternalError 5000000: three attempts with exponential backoff", .requires(.pythonCryptography))
    func internalErrorExhausted() async throws {
        let server = try await FakeAppStore()
        let time = RecordingTimeSource()
        let error = await expectError {
            try await server.client(retryPolicy: exactRetries, timeSource: time.timeSource)
                .customerGroups(anyTransactionID: "generalInternal")
        }
        #expect(error?.code == .generalInternalError)
        #expect(error?.httpStatus == 500)
        #expect(error?.apiErrorCode == 5_000_000)
        #expect(error?.apiErrorMessage == "An unknown error occurred.")
        #expect(error?.attempts == 3)
        #expect(time.sleeps == [.milliseconds(500), .seconds(1)])
        #expect(try await server.log().count == 3)
    }

    @Test("500 then 200: the retry succeeds", .requires(.pythonCryptography))
    func internalErrorThenSuccess() async throws {
        let server = try await FakeAppStore()
        let time = RecordingTimeSource()
        let response = try await server.client(retryPolicy: exactRetries, timeSource: time.timeSource)
            .customerGroups(anyTransactionID: "flaky_generalInternal_1")
        #expect(response == .sandboxPlaceholder)
        #expect(time.sleeps == [.milliseconds(500)])
        #expect(try await server.log().count == 2)
    }

    @Test("RetryPolicy.none sends exactly one request", .requires(.pythonCryptography))
    func retriesDisabled() async throws {
        let server = try await FakeAppStore()
        let time = RecordingTimeSource()
        let error = await expectError {
            try await server.client(retryPolicy: .none, timeSource: time.timeSource)
                .customerGroups(anyTransactionID: "generalInternal")
        }
        #expect(error?.code == .generalInternalError)
        #expect(error?.attempts == 1)
        #expect(time.sleeps == [])
        #expect(try await server.log().count == 1)
    }

    @Test("a malformed 200 is a decoding error carrying the engine's JSON path", .requires(.pythonCryptography))
    func malformedBody() async throws {
        let server = try await FakeAppStore()
        let error = await expectError { try await server.client().customerGroups(anyTransactionID: "malformed") }
        #expect(error?.code == .invalidResponse)
        #expect(error?.httpStatus == 200)
        #expect(error?.jsonPath == "groups[0].groupId")
        #expect(error?.attempts == 1)
        #expect(try await server.log().count == 1)
    }

    @Test("a 200 that is not JSON is a decoding error at the root", .requires(.pythonCryptography))
    func notJSON() async throws {
        let server = try await FakeAppStore()
        let error = await expectError { try await server.client().customerGroups(anyTransactionID: "notjson") }
        #expect(error?.code == .invalidResponse)
        #expect(error?.jsonPath == "$")
        #expect(error?.attempts == 1)
        // Not "expected an object, found a boolean": the body starts with a `t`, but is not JSON.
        #expect(
            error?.message == "the body is not JSON: invalid literal (expected true, false or null) at line 1, column 1"
        )
    }

    @Test(
        "a Content-Length of 10^23 is too large at once: no waiting for the body, no retry",
        .requires(.pythonCryptography)
    )
    func hugeContentLength() async throws {
        let server = try await FakeAppStore()
        let error = await expectError {
            try await server.client(timeout: .seconds(3)).customerGroups(anyTransactionID: "hugelength")
        }
        #expect(error?.code == .responseTooLarge)
        #expect(error?.message == "the answer's body is larger than 1048576 bytes")
        #expect(error?.attempts == 1)
        #expect(try await server.log().count == 1)
    }

    @Test("the environment maps to the engine's StoreEnvironment")
    func storeEnvironment() throws {
        let credentials = try FakeAppStore.credentials()
        #expect(
            try AppStoreGroupsClient(server: .production, credentials: credentials).storeEnvironment == .production
        )
        #expect(try AppStoreGroupsClient(server: .sandbox, credentials: credentials).storeEnvironment == .sandbox)
        let proxy = try #require(URL(string: "https://proxy.example.com/apple"))
        let custom = AppStoreServer.custom(baseURL: proxy, storeEnvironment: .production)
        #expect(try AppStoreGroupsClient(server: custom, credentials: credentials).storeEnvironment == .production)
        #expect(AppStoreServer.production.baseURL.absoluteString == "https://api.storekit.apple.com")
        #expect(AppStoreServer.sandbox.baseURL.absoluteString == "https://api.storekit-sandbox.apple.com")
    }
}
