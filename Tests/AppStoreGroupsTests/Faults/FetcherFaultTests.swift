import Foundation
import GroupPolicyBasics
import ServingTestSupport
import Testing

@testable import AppStoreGroups

/// Each way the network can fail the fetcher, against real loopback servers with real clocks: the call must end in the
/// right ``AppStoreGroupsError`` code, after a bounded number of attempts, within `timeout × attempts + waits` (plus
/// slack for a loaded machine), and no text it produces may hold the key or a token.
@Suite("Fetcher faults", .requires(.pythonCryptography))
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

    /// The timeout of a test whose request fails some other way than by timing out: long enough that a machine running
    /// the whole suite under two busy loops never reaches it (a refused connection came back as a timeout at 3
    /// seconds), while the bound on the whole call still catches a hang.
    static let answerTimeout: Duration = .seconds(30)

    /// `quickRetries`' waits before the second and third attempts.
    static let quickWaits: [Duration] = [.milliseconds(100), .milliseconds(200)]

    /// One way the network fails a call, and how the call must end.
    struct Fault: Sendable, CustomTestStringConvertible {
        enum Target: Sendable { case refusingPort, fakeAppStore, unresolvableHost, plainHTTP, untrustedTLS }

        var testDescription: String
        var target: Target
        var id: String
        var code: AppStoreGroupsError.Code
        var status: Int?
        var attempts: Int
        var waits: [Duration]
        var retryAfter: Date?
        var messagePrefix: String?
        var timeout: Duration
        /// Real time each attempt must spend (a timeout's whole length), beside the waits.
        var spentPerAttempt: Duration

        init(
            _ name: String,
            _ target: Target,
            _ code: AppStoreGroupsError.Code,
            id: String = "ok",
            status: Int? = nil,
            attempts: Int = 3,
            waits: [Duration] = FetcherFaultTests.quickWaits,
            retryAfter: Date? = nil,
            prefix: String? = nil,
            timeout: Duration = FetcherFaultTests.answerTimeout,
            spentPerAttempt: Duration = .zero
        ) {
            (testDescription, self.target, self.id, self.code, self.status) = (name, target, id, code, status)
            (self.attempts, self.waits, self.retryAfter, messagePrefix) = (attempts, waits, retryAfter, prefix)
            (self.timeout, self.spentPerAttempt) = (timeout, spentPerAttempt)
        }
    }

    static let faults: [Fault] =
        [
            Fault("connection refused", .refusingPort, .transportFailure, prefix: "the request to 127.0.0.1 failed: "),
            Fault(
                "connection reset (RST) in the middle of the body",
                .fakeAppStore,
                .transportFailure,
                id: "reset_100"
            ),
            // RFC 6761 reserves .invalid: it never resolves, so nothing reaches Apple or anyone else.
            Fault(
                "a host that does not resolve (.invalid), named in the message",
                .unresolvableHost,
                .transportFailure,
                id: "2000000123456789",
                prefix: "the request to api.storekit-sandbox.invalid failed: "
            ),
            Fault("https to a port that speaks plain HTTP: nothing but TLS is sent", .plainHTTP, .transportFailure),
            // The alert ends each attempt at once; the timeout is wide because a handshake with a
            // Python server under two busy loops and a full test run once took over 3 seconds.
            Fault("https to a self-signed certificate", .untrustedTLS, .transportFailure, timeout: .seconds(20)),
            // One byte a second for 600 bytes: never idle for the timeout, but ten minutes in all, so a test process
            // stalled for a minute (two busy loops) cannot see the body finish before the deadline it was late to run.
            Fault(
                "slow loris: a body trickled a byte at a time times out per attempt, however busy the line",
                .fakeAppStore,
                .timeout,
                id: "trickle_1000_600",
                timeout: .seconds(2),
                spentPerAttempt: .seconds(2)
            ),
            Fault(
                "429 with the largest Retry-After the client reads (year 33658): fails at once, keeps the instant",
                .fakeAppStore,
                .rateLimitExceeded,
                id: "ratelimit_999999999999999",
                status: 429,
                attempts: 1,
                waits: [],
                retryAfter: Date(timeIntervalSince1970: 999_999_999_999.999)
            ),
            // September 2001: the earliest instant the client believes.
            Fault(
                "429 every time with a Retry-After in the past: retried at once",
                .fakeAppStore,
                .rateLimitExceeded,
                id: "ratelimit_1000000000000",
                status: 429,
                waits: [.zero, .zero],
                retryAfter: Date(timeIntervalSince1970: 1_000_000_000)
            ),
        ]
        + garbageRetryAfter.map { header in
            let hex = header.utf8.map { String(format: "%02x", $0) }.joined()
            let name = "429 with the garbage Retry-After \(header.debugDescription): backoff, no instant"
            return Fault(name, .fakeAppStore, .rateLimitExceeded, id: "ratelimithex_\(hex)", status: 429)
        }

    /// `Retry-After` values that are not a UNIX time in milliseconds ("" sends an empty header).
    static let garbageRetryAfter = [
        "1.5", "1700000000123.5", "-1", "-1700000000123", "+1700000000123", "30", "120", "1700000000", "1e3",
        "0x18BCFE56800", "Wed, 21 Oct 2015 07:28:00 GMT", "99999999999999999999", "9999999999999999", "", "soon", "5",
    ]

    @Test(
        "the call ends in the right code after bounded attempts and waits, in bounded time, holding no secret",
        arguments: faults
    )
    func fault(_ fault: Fault) async throws {
        let refusing = try RefusingPort()
        let store = try await (fault.target == .fakeAppStore ? FakeAppStore() : nil)
        let faultServer: FaultServer? =
            switch fault.target {
            case .plainHTTP: try await FaultServer.start(.plain)
            case .untrustedTLS: try await FaultServer.start(.tls)
            default: nil
            }
        let baseURL =
            switch fault.target {
            case .refusingPort: refusing.baseURL
            case .fakeAppStore: try #require(store).baseURL
            case .unresolvableHost: try #require(URL(string: "https://api.storekit-sandbox.invalid"))
            case .plainHTTP, .untrustedTLS: try #require(faultServer).baseURL
            }
        let time = RecordingTimeSource(spendsWaits: true)
        let client = try Self.client(baseURL, timeout: fault.timeout, timeSource: time.timeSource)
        let (error, elapsed) = await timed {
            await expectError { try await client.customerGroups(anyTransactionID: fault.id) }
        }
        #expect(error?.code == fault.code)
        #expect(error?.httpStatus == fault.status)
        #expect(error?.attempts == fault.attempts)
        #expect(error?.retryAfter == fault.retryAfter)
        if let prefix = fault.messagePrefix { #expect(error?.message.hasPrefix(prefix) == true) }
        #expect(time.sleeps == fault.waits)
        #expect(elapsed >= fault.spentPerAttempt * fault.attempts + time.total)
        #expect(elapsed < failureBound(timeout: fault.timeout, attempts: fault.attempts, waits: time.total))
        var scan = try SecretScan()
        if let store {
            let requests = try await store.log(count: fault.attempts)
            #expect(requests.map(\.authorization) == Array(repeating: "ok", count: fault.attempts))
            scan = try SecretScan(tokens: requests.compactMap(\.token))
        }
        // Nothing crossed the wire in the clear. A plain server saw one connection per attempt, each a TLS handshake
        // record (0x16, version 3.x), never an HTTP request, so the Authorization header never went out. A TLS server
        // saw the client refuse its certificate with an alert: no handshake completed, so no request went out.
        let events = try await faultServer?.stop() ?? []
        if fault.target == .untrustedTLS {
            #expect(events.map(\.event) == ["handshake-failed", "handshake-failed", "handshake-failed"])
            for event in events { #expect(event.reason?.contains("ALERT") == true, "\(event.reason ?? "no reason")") }
        }
        if fault.target == .plainHTTP {
            #expect(events.map(\.event) == ["connection", "connection", "connection"])
            for event in events {
                #expect(Array(event.data.prefix(2)) == [0x16, 0x03])
                let text = String(decoding: event.data, as: UTF8.self)
                for needle in ["GET ", "HTTP/1.1", "Authorization", "authorization", "Bearer", "/groups/v1/"] {
                    #expect(!text.contains(needle), "a connection sent '\(needle)' in the clear")
                }
                scan.check(text, "what the plain HTTP server received")
            }
        }
        scan.check(error)
    }

    /// A 429 storm whose every `Retry-After` (the n-th answer names start + n × step) is close
    /// enough to honour, and how many attempts the policy makes of it.
    struct Storm: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var policy: RetryPolicy
        var step: Duration = .milliseconds(400)
        /// Whether the waits are spent in real time (else only recorded).
        var spendsWaits = true
        var attempts: Int

        static func quick(maximumAttempts: Int, maximumTotalWait: Duration) -> RetryPolicy {
            RetryPolicy(
                maximumAttempts: maximumAttempts,
                maximumRateLimitWait: .seconds(5),
                maximumTotalWait: maximumTotalWait,
                initialBackoff: .milliseconds(100),
                jitter: 0
            )
        }
    }

    @Test(
        "a 429 storm ends after bounded attempts and a bounded total wait, honouring each Retry-After",
        arguments: [
            Storm(
                testDescription: "the total-wait bound stops it: a third 400 ms wait would pass 1 s",
                policy: Storm.quick(maximumAttempts: 10, maximumTotalWait: .seconds(1)),
                attempts: 3
            ),
            Storm(
                testDescription: "the attempt bound stops it first",
                policy: Storm.quick(maximumAttempts: 4, maximumTotalWait: .seconds(30)),
                attempts: 4
            ),
            // 20 s each is within maximumRateLimitWait (30 s), but two would pass maximumTotalWait (30 s).
            Storm(
                testDescription: "the default policy waits at most 30 s in all, even when each wait is allowed",
                policy: .default,
                step: .seconds(20),
                spendsWaits: false,
                attempts: 2
            ),
        ]
    )
    func rateLimitStorm(_ storm: Storm) async throws {
        let server = try await FakeAppStore()
        let startMilliseconds = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        let start = Date(timeIntervalSince1970: Double(startMilliseconds) / 1000)
        // This client's clock moves only by its waits.
        let time = RecordingTimeSource(steppingFrom: start, spendsWaits: storm.spendsWaits)
        let policy = storm.policy
        let client = try server.client(retryPolicy: policy, timeout: Self.answerTimeout, timeSource: time.timeSource)
        let step = Int64(storm.step.seconds * 1000)
        let (error, elapsed) = await timed {
            await expectError {
                try await client.customerGroups(anyTransactionID: "ratelimitstep_\(startMilliseconds)_\(step)")
            }
        }
        let waits = Array(repeating: storm.step, count: storm.attempts - 1)
        #expect(error?.code == .rateLimitExceeded)
        #expect(error?.httpStatus == 429)
        #expect(error?.attempts == storm.attempts)
        let lastInstant = startMilliseconds + step * Int64(storm.attempts)
        #expect(error?.retryAfter == Date(timeIntervalSince1970: Double(lastInstant) / 1000))
        #expect(time.sleeps == waits)
        if storm.spendsWaits { #expect(elapsed >= waits.reduce(.zero, +)) }
        #expect(
            elapsed < failureBound(timeout: Self.answerTimeout, attempts: storm.attempts, waits: waits.reduce(.zero, +))
        )
        let requests = try await server.log(count: storm.attempts)
        #expect(requests.count == storm.attempts)
        try SecretScan(tokens: requests.compactMap(\.token)).check(error)
    }
}
