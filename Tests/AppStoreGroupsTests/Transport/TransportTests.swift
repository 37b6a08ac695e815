import Foundation
import ServingTestSupport
import Testing

@testable import AppStoreGroups

/// The URLSession transport and the client's checks of what any transport returns, against the real loopback server.
@Suite("Transport")
struct TransportTests {
    @Test(
        "an answer slower than the timeout is a timeout, retried with backoff unless retries are off",
        .requires(.pythonCryptography),
        arguments: [(RetryPolicy.none, 1, [Duration]()), (exactRetries, 3, [.milliseconds(500), .seconds(1)])]
    )
    func slowAnswer(policy: RetryPolicy, attempts: Int, waits: [Duration]) async throws {
        let server = try await FakeAppStore()
        let time = RecordingTimeSource()
        let started = ContinuousClock.now
        let error = await expectError {
            try await server.client(retryPolicy: policy, timeout: .seconds(1), timeSource: time.timeSource)
                .customerGroups(anyTransactionID: "slow_10000")
        }
        #expect(error?.code == .timeout)
        #expect(error?.httpStatus == nil)
        #expect(error?.attempts == attempts)
        #expect(time.sleeps == waits)
        // The server answers after 10 s, so a timeout error proves the client gave up first; no
        // upper bound on the elapsed time, which other suites' CPU load could stretch.
        #expect(ContinuousClock.now - started >= .seconds(1))
        #expect(try await server.log(count: attempts).count == attempts)
    }

    @Test("an answer within the timeout succeeds", .requires(.pythonCryptography))
    func slowButInTime() async throws {
        let server = try await FakeAppStore()
        // The answer comes after 200 ms; the timeout leaves a busy machine room to deliver it
        // (with 5 s, an exchange slowed by other suites could time out on every attempt).
        let timeout = FetcherFaultTests.answerTimeout
        let response = try await server.client(timeout: timeout).customerGroups(anyTransactionID: "slow_200")
        #expect(response == .sandboxPlaceholder)
    }

    @Test("the client rejects an oversized body even from a transport that ignores the limit")
    func oversizedFromCustomTransport() async throws {
        struct Careless: HTTPTransport {
            let contentLength: String?
            let bodySize: Int
            func send(_ request: HTTPRequest) async throws -> HTTPResponse {
                var headers: [String: String] = [:]
                if let contentLength { headers["Content-Length"] = contentLength }
                return HTTPResponse(status: 200, headerFields: headers, body: Array(repeating: 0x20, count: bodySize))
            }
        }
        let credentials = try FakeAppStore.credentials()
        for transport in [
            Careless(contentLength: nil, bodySize: (1 << 20) + 1),
            Careless(contentLength: "2000000", bodySize: 10),
        ] {
            let client = try AppStoreGroupsClient(server: .sandbox, credentials: credentials, transport: transport)
            let error = await expectError { try await client.customerGroups(anyTransactionID: "ok") }
            #expect(error?.code == .responseTooLarge)
        }
    }

    @Test("a transport error that quotes the request never carries the token into the client's error")
    func tokenRedacted() async throws {
        struct Leaky: HTTPTransport {
            struct Failure: Error, CustomStringConvertible {
                var headers: [String: String]
                var description: String { "failed with headers \(headers)" }
            }
            func send(_ request: HTTPRequest) async throws -> HTTPResponse {
                throw Failure(headers: request.headerFields)
            }
        }
        let client = try AppStoreGroupsClient(
            server: .sandbox,
            credentials: FakeAppStore.credentials(),
            transport: Leaky(),
            retryPolicy: .none
        )
        let error = try #require(await expectError { try await client.customerGroups(anyTransactionID: "ok") })
        #expect(error.code == .transportFailure)
        #expect(error.description.contains("Bearer <redacted>"))
        #expect(!error.description.contains("eyJ"))  // base64url of '{"' starts every JWT
    }

    @Test("cancelling the calling task ends the request as cancelled", .requires(.pythonCryptography))
    func cancellation() async throws {
        let server = try await FakeAppStore()
        let client = try server.client(retryPolicy: .none)
        let task = Task { try await client.customerGroups(anyTransactionID: "slow_120000") }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        let started = ContinuousClock.now
        let error = await expectError { try await task.value }
        #expect(error?.code == .cancelled)
        // Well before the server's two minutes, allowing a busy machine's seconds (16 s once, under
        // two busy loops beside a full CI run: the bound only rules out waiting for the answer).
        #expect(ContinuousClock.now - started < .seconds(60))
    }

    @Test("HTTPResponse looks header fields up case-insensitively")
    func headerLookup() {
        let response = HTTPResponse(status: 429, headerFields: ["Retry-After": "1", "content-TYPE": "a"])
        #expect(response.value(forHeader: "retry-after") == "1")
        #expect(response.value(forHeader: "Content-Type") == "a")
        #expect(response.headerFields == ["retry-after": "1", "content-type": "a"])
    }
}
