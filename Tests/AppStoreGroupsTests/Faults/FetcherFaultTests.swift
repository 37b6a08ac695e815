import Foundation
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups

/// Each way the network can fail the fetcher, against real loopback servers with real clocks: the
/// call must end in the right ``AppStoreGroupsError`` code, after a bounded number of attempts,
/// within `timeout × attempts + waits` (plus slack for a loaded machine), and no text it produces
/// may hold the key or a token.
@Suite("Fetcher faults")
struct FetcherFaultTests {
    /// A client for `baseURL` with quick real-time retries.
    static func client(
        _ baseURL: URL,
        timeout: Duration,
        retryPolicy: RetryPolicy = quickRetries,
        timeSource: TimeSource
    ) throws -> AppStoreGroupsClient {
        try AppStoreGroupsClient(
            server: .custom(baseURL: baseURL),
            credentials: FakeAppStore.credentials(),
            retryPolicy: retryPolicy,
            timeout: timeout,
            timeSource: timeSource
        )
    }

    /// The timeout of a test whose request fails some other way than by timing out: long enough
    /// that a machine running the whole suite under two busy loops never reaches it (a refused
    /// connection came back as a timeout at 3 seconds), while the bound on the whole call still
    /// catches a hang.
    static let answerTimeout: Duration = .seconds(30)

    /// `quickRetries`' waits before the second and third attempts.
    static let quickWaits: [Duration] = [.milliseconds(100), .milliseconds(200)]

    @Test("connection refused: a transport failure after 3 attempts, in bounded time")
    func connectionRefused() async throws {
        let refusing = try RefusingPort()
        let time = SleepingTimeSource()
        let client = try Self.client(refusing.baseURL, timeout: Self.answerTimeout, timeSource: time.timeSource)
        let (error, elapsed) = await timed {
            await expectError { try await client.customerGroups(anyTransactionID: "ok") }
        }
        #expect(error?.code == .transportFailure)
        #expect(error?.attempts == 3)
        #expect(error?.httpStatus == nil)
        #expect(error?.message.hasPrefix("the request to 127.0.0.1 failed: ") == true)
        #expect(time.sleeps == Self.quickWaits)
        #expect(elapsed < failureBound(timeout: Self.answerTimeout, attempts: 3, waits: time.total))
        try SecretScan().check(error)
        withExtendedLifetime(refusing) {}
    }

    @Test(
        "connection reset (RST) in the middle of the body: a transport failure after 3 attempts",
        .requires(.pythonCryptography)
    )
    func resetMidBody() async throws {
        let server = try await FakeAppStore()
        let time = SleepingTimeSource()
        let client = try Self.client(server.baseURL, timeout: Self.answerTimeout, timeSource: time.timeSource)
        let (error, elapsed) = await timed {
            await expectError { try await client.customerGroups(anyTransactionID: "reset_100") }
        }
        #expect(error?.code == .transportFailure)
        #expect(error?.attempts == 3)
        #expect(error?.httpStatus == nil)
        #expect(time.sleeps == Self.quickWaits)
        #expect(elapsed < failureBound(timeout: Self.answerTimeout, attempts: 3, waits: time.total))
        let requests = try await server.log(count: 3)
        #expect(requests.map(\.authorization) == ["ok", "ok", "ok"])
        try SecretScan(tokens: requests.compactMap(\.token)).check(error)
    }

    @Test("a host that does not resolve (.invalid): a transport failure naming the host, after 3 attempts")
    func dnsFailure() async throws {
        let time = SleepingTimeSource()
        // RFC 6761 reserves .invalid: it never resolves, so nothing reaches Apple or anyone else.
        let url = try #require(URL(string: "https://api.storekit-sandbox.invalid"))
        let client = try Self.client(url, timeout: Self.answerTimeout, timeSource: time.timeSource)
        let (error, elapsed) = await timed {
            await expectError { try await client.customerGroups(anyTransactionID: "2000000123456789") }
        }
        #expect(error?.code == .transportFailure)
        #expect(error?.attempts == 3)
        #expect(error?.message.hasPrefix("the request to api.storekit-sandbox.invalid failed: ") == true)
        #expect(time.sleeps == Self.quickWaits)
        #expect(elapsed < failureBound(timeout: Self.answerTimeout, attempts: 3, waits: time.total))
        try SecretScan().check(error)
    }

    @Test(
        "https to a port that speaks plain HTTP: the handshake fails closed; nothing but TLS is sent",
        .requires(.pythonCryptography)
    )
    func tlsToPlainHTTP() async throws {
        let server = try await FaultServer.start(.plain)
        let time = SleepingTimeSource()
        let client = try Self.client(server.baseURL, timeout: Self.answerTimeout, timeSource: time.timeSource)
        let (error, elapsed) = await timed {
            await expectError { try await client.customerGroups(anyTransactionID: "ok") }
        }
        let events = try await server.stop()
        #expect(error?.code == .transportFailure)
        #expect(error?.attempts == 3)
        #expect(error?.httpStatus == nil)
        #expect(time.sleeps == Self.quickWaits)
        #expect(elapsed < failureBound(timeout: Self.answerTimeout, attempts: 3, waits: time.total))
        // Each attempt opened one connection and sent a TLS handshake record (0x16, version 3.x),
        // never an HTTP request: the Authorization header never crossed the wire in the clear.
        #expect(events.map(\.event) == ["connection", "connection", "connection"])
        let scan = try SecretScan()
        for event in events {
            #expect(Array(event.data.prefix(2)) == [0x16, 0x03])
            let text = String(decoding: event.data, as: UTF8.self)
            for needle in ["GET ", "HTTP/1.1", "Authorization", "authorization", "Bearer", "/groups/v1/"] {
                #expect(!text.contains(needle), "a connection sent '\(needle)' in the clear")
            }
            scan.check(text, "what the plain HTTP server received")
        }
        scan.check(error)
    }

    @Test(
        "https to a server with a self-signed certificate: not trusted, fails closed, no request sent",
        .requires(.pythonCryptography)
    )
    func tlsUntrustedCertificate() async throws {
        let server = try await FaultServer.start(.tls)
        let time = SleepingTimeSource()
        // The alert ends each attempt at once; the timeout is wide because a handshake with a
        // Python server under two busy loops and a full test run once took over 3 seconds.
        let client = try Self.client(server.baseURL, timeout: .seconds(20), timeSource: time.timeSource)
        let (error, elapsed) = await timed {
            await expectError { try await client.customerGroups(anyTransactionID: "ok") }
        }
        let events = try await server.stop()
        #expect(error?.code == .transportFailure)
        #expect(error?.attempts == 3)
        #expect(error?.httpStatus == nil)
        #expect(time.sleeps == Self.quickWaits)
        #expect(elapsed < failureBound(timeout: .seconds(20), attempts: 3, waits: time.total))
        // The client got as far as judging the certificate and refused it with an alert; no
        // handshake completed, so no request (and no token) ever went out.
        #expect(events.map(\.event) == ["handshake-failed", "handshake-failed", "handshake-failed"])
        for event in events {
            #expect(event.reason?.contains("ALERT") == true, "\(event.reason ?? "no reason")")
        }
        try SecretScan().check(error)
    }

    @Test(
        "slow loris: a body trickled a byte at a time times out per attempt, however busy the line",
        .requires(.pythonCryptography)
    )
    func slowLoris() async throws {
        let server = try await FakeAppStore()
        let time = SleepingTimeSource()
        let client = try Self.client(server.baseURL, timeout: .seconds(2), timeSource: time.timeSource)
        // One byte every 100 ms for 600 bytes: never idle for the timeout, but a minute in all.
        let (error, elapsed) = await timed {
            await expectError { try await client.customerGroups(anyTransactionID: "trickle_100_600") }
        }
        #expect(error?.code == .timeout)
        #expect(error?.attempts == 3)
        #expect(error?.httpStatus == nil)
        #expect(time.sleeps == Self.quickWaits)
        // Each attempt spent its whole timeout, and no more.
        #expect(elapsed >= .seconds(6) + time.total)
        #expect(elapsed < failureBound(timeout: .seconds(2), attempts: 3, waits: time.total))
        let requests = try await server.log(count: 3)
        #expect(requests.map(\.authorization) == ["ok", "ok", "ok"])
        try SecretScan(tokens: requests.compactMap(\.token)).check(error)
    }

    /// A 429 storm whose every `Retry-After` is close enough to honour.
    struct Storm: Sendable, CustomTestStringConvertible {
        var maximumAttempts: Int
        var maximumTotalWait: Duration
        var attempts: Int
        var testDescription: String {
            "at most \(maximumAttempts) attempts, \(maximumTotalWait) of waits → \(attempts) attempts"
        }
    }

    @Test(
        "a 429 storm ends after bounded attempts and a bounded total wait, honouring each Retry-After",
        .requires(.pythonCryptography),
        arguments: [
            // The total-wait bound stops it: a third 400 ms wait would pass 1 s.
            Storm(maximumAttempts: 10, maximumTotalWait: .seconds(1), attempts: 3),
            // The attempt bound stops it first.
            Storm(maximumAttempts: 4, maximumTotalWait: .seconds(30), attempts: 4),
        ]
    )
    func rateLimitStorm(_ storm: Storm) async throws {
        let server = try await FakeAppStore()
        let startMilliseconds = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        let start = Date(timeIntervalSince1970: Double(startMilliseconds) / 1000)
        let time = SteppingTimeSource(start: start, realSleep: true)
        let policy = RetryPolicy(
            maximumAttempts: storm.maximumAttempts,
            maximumRateLimitWait: .seconds(5),
            maximumTotalWait: storm.maximumTotalWait,
            initialBackoff: .milliseconds(100),
            jitter: 0
        )
        let client = try Self.client(
            server.baseURL,
            timeout: Self.answerTimeout,
            retryPolicy: policy,
            timeSource: time.timeSource
        )
        // The n-th answer names start + n × 400 ms; this client's clock moves only by its waits.
        let (error, elapsed) = await timed {
            await expectError {
                try await client.customerGroups(anyTransactionID: "ratelimitstep_\(startMilliseconds)_400")
            }
        }
        let waits = Array(repeating: Duration.milliseconds(400), count: storm.attempts - 1)
        #expect(error?.code == .rateLimitExceeded)
        #expect(error?.httpStatus == 429)
        #expect(error?.attempts == storm.attempts)
        let lastInstant = startMilliseconds + 400 * Int64(storm.attempts)
        #expect(error?.retryAfter == Date(timeIntervalSince1970: Double(lastInstant) / 1000))
        #expect(time.sleeps == waits)
        #expect(elapsed >= waits.reduce(.zero, +))
        #expect(
            elapsed < failureBound(timeout: Self.answerTimeout, attempts: storm.attempts, waits: waits.reduce(.zero, +))
        )
        let requests = try await server.log(count: storm.attempts)
        #expect(requests.count == storm.attempts)
        try SecretScan(tokens: requests.compactMap(\.token)).check(error)
    }

    @Test(
        "with the default policy a 429 storm waits at most 30 s in all, even when each wait is allowed",
        .requires(.pythonCryptography)
    )
    func rateLimitStormDefaultTotal() async throws {
        let server = try await FakeAppStore()
        let startMilliseconds = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        let start = Date(timeIntervalSince1970: Double(startMilliseconds) / 1000)
        // Waits are recorded, not spent: 20 s each is within maximumRateLimitWait (30 s), but two
        // of them would pass maximumTotalWait (30 s).
        let time = SteppingTimeSource(start: start, realSleep: false)
        let client = try Self.client(
            server.baseURL,
            timeout: Self.answerTimeout,
            retryPolicy: .default,
            timeSource: time.timeSource
        )
        let error = await expectError {
            try await client.customerGroups(anyTransactionID: "ratelimitstep_\(startMilliseconds)_20000")
        }
        #expect(error?.code == .rateLimitExceeded)
        #expect(error?.attempts == 2)
        #expect(error?.retryAfter == Date(timeIntervalSince1970: Double(startMilliseconds + 40_000) / 1000))
        #expect(time.sleeps == [.seconds(20)])
        #expect(try await server.log(count: 2).count == 2)
    }

    /// `Retry-After` values that are not a UNIX time in milliseconds.
    static let garbageRetryAfter = [
        "1.5", "1700000000123.5", "-1", "-1700000000123", "+1700000000123", "30", "120", "1700000000", "1e3",
        "0x18BCFE56800", "Wed, 21 Oct 2015 07:28:00 GMT", "99999999999999999999", "9999999999999999", "",
    ]

    @Test(
        "429 every time with a garbage Retry-After: backoff, 3 attempts, no instant",
        .requires(.pythonCryptography),
        arguments: garbageRetryAfter
    )
    func garbageRetryAfterStorm(_ header: String) async throws {
        let server = try await FakeAppStore()
        let time = SleepingTimeSource()
        let client = try Self.client(server.baseURL, timeout: Self.answerTimeout, timeSource: time.timeSource)
        let hex = header.utf8.map { String(format: "%02x", $0) }.joined()
        let id = "ratelimithex_\(hex)"
        let (error, elapsed) = await timed {
            await expectError { try await client.customerGroups(anyTransactionID: id) }
        }
        #expect(error?.code == .rateLimitExceeded)
        #expect(error?.attempts == 3)
        #expect(error?.retryAfter == nil)
        #expect(time.sleeps == Self.quickWaits)
        #expect(elapsed < failureBound(timeout: Self.answerTimeout, attempts: 3, waits: time.total))
        let requests = try await server.log(count: 3)
        #expect(requests.count == 3)
        try SecretScan(tokens: requests.compactMap(\.token)).check(error)
    }

    @Test(
        "429 with the largest Retry-After the client reads (year 33658): fails at once, keeps the instant",
        .requires(.pythonCryptography)
    )
    func hugeRetryAfter() async throws {
        let server = try await FakeAppStore()
        let time = SleepingTimeSource()
        let client = try Self.client(server.baseURL, timeout: Self.answerTimeout, timeSource: time.timeSource)
        let (error, elapsed) = await timed {
            await expectError { try await client.customerGroups(anyTransactionID: "ratelimit_999999999999999") }
        }
        #expect(error?.code == .rateLimitExceeded)
        #expect(error?.attempts == 1)
        #expect(error?.retryAfter == Date(timeIntervalSince1970: 999_999_999_999.999))
        #expect(time.sleeps == [])
        #expect(elapsed < failureBound(timeout: Self.answerTimeout, attempts: 1, waits: .zero))
        try SecretScan(tokens: try await server.log(count: 1).compactMap(\.token)).check(error)
    }

    @Test("429 every time with a Retry-After in the past: retried at once, 3 attempts", .requires(.pythonCryptography))
    func pastRetryAfter() async throws {
        let server = try await FakeAppStore()
        let time = SleepingTimeSource()
        let client = try Self.client(server.baseURL, timeout: Self.answerTimeout, timeSource: time.timeSource)
        // September 2001: the earliest instant the client believes.
        let (error, elapsed) = await timed {
            await expectError { try await client.customerGroups(anyTransactionID: "ratelimit_1000000000000") }
        }
        #expect(error?.code == .rateLimitExceeded)
        #expect(error?.attempts == 3)
        #expect(error?.retryAfter == Date(timeIntervalSince1970: 1_000_000_000))
        #expect(time.sleeps == [.zero, .zero])
        #expect(elapsed < failureBound(timeout: Self.answerTimeout, attempts: 3, waits: .zero))
        try SecretScan(tokens: try await server.log(count: 3).compactMap(\.token)).check(error)
    }
}
