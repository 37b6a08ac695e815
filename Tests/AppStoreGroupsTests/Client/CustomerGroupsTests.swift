import Foundation
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups

/// Get Customer Groups through the real loopback server: every row of Apple's table.
@Suite("Get Customer Groups", .requires(.pythonCryptography))
struct CustomerGroupsTests {
    @Test("200: the body decodes exactly, with one signed request; an empty groups list too")
    func success() async throws {
        let server = try await FakeAppStore()
        let client = try server.client()
        let response = try await client.customerGroups(anyTransactionID: "ok")
        #expect(response == .sandboxPlaceholder)
        let requests = try await server.log()
        #expect(requests.map(\.path) == ["/groups/v1/currentGroups/ok"])
        #expect(requests.map(\.authorization) == ["ok"])
        let empty = try await client.customerGroups(anyTransactionID: "empty")
        #expect(empty == GetCustomerGroupsResponse(groups: []))
    }

    @Test(
        "a retried call succeeds after each wait Retry-After or the backoff asks, with a fresh token every attempt",
        arguments: [
            // 429 RateLimitExceededError 4290000: waits until Retry-After (5 s from now), then succeeds.
            ("ratelimit_{in 5000}_1", [Duration.milliseconds(5_000)]),
            // 500, then 200; 500 twice, then 200.
            ("flaky_generalInternal_1", [.milliseconds(500)]),
            ("flaky_generalInternal_2", [.milliseconds(500), .seconds(1)]),
        ]
    )
    func retriedThenServed(id: String, waits: [Duration]) async throws {
        let server = try await FakeAppStore()
        let nowMilliseconds = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        let time = RecordingTimeSource(fixedNow: Date(timeIntervalSince1970: Double(nowMilliseconds) / 1000))
        let response = try await server.client(retryPolicy: exactRetries, timeSource: time.timeSource)
            .customerGroups(anyTransactionID: id.replacing("{in 5000}", with: "\(nowMilliseconds + 5_000)"))
        #expect(response == .sandboxPlaceholder)
        #expect(time.sleeps == waits)
        let tokens = try await server.log().compactMap(\.token)
        #expect(tokens.count == waits.count + 1)
        #expect(Set(tokens).count == waits.count + 1)
    }

    @Test("429 with a real short wait: the retry reaches the server no earlier than Retry-After")
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
}
