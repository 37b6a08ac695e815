import AppStoreGroups
import Foundation
import GroupPolicy
import ServingTestSupport
import Testing

/// `group-policy fetch` against every faulty server of ``FetcherFaultTests``, with the CLI's own
/// default retry policy: one `Error:` line, the right exit status, within `--timeout` (retries and
/// waits included), and neither output holds the key or a token.
@Suite("CLI fetch faults")
struct FetchFaultTests {
    enum Fault: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case connectionRefused, resetMidBody, dnsFailure, tlsToPlainHTTP, tlsUntrustedCertificate, slowLoris
        case rateLimitStorm, garbageRetryAfter

        var testDescription: String { rawValue }

        /// The `--timeout` in seconds.
        ///
        /// For a slow loris, too little for a second attempt. For the rest, room for three attempts
        /// and their waits (two backoffs of 0.5 s and 1 s at most, or two Retry-After waits of about
        /// a second) on a busy machine too. They take about 2 s alone, but with 5 s a loaded CI ran
        /// out of time for the third: a TLS handshake with the Python server, or the start of the
        /// process, took seconds there.
        var timeout: Int { self == .slowLoris ? 2 : 60 }

        var status: Int32 { [.rateLimitStorm, .garbageRetryAfter].contains(self) ? 1 : 2 }

        /// The one line the CLI must print on stderr: its exact start and end.
        var message: (prefix: String, suffix: String) {
            let rateLimited =
                #"Error: the App Store answered RateLimitExceededError (HTTP 429, errorCode 4290000, "#
                + #"errorMessage "Rate limit exceeded.""#
            switch self {
            case .dnsFailure:
                return ("Error: the request to api.storekit-sandbox.invalid failed: ", "(after 3 attempts)\n")
            case .slowLoris:
                // The first attempt takes all of --timeout; nothing is left for a retry.
                return ("Error: no complete answer from 127.0.0.1 within the timeout\n", "")
            case .rateLimitStorm:
                return (rateLimited + ", retry after ", " ms since 1970, after 3 attempts)\n")
            case .garbageRetryAfter:
                return (rateLimited + ", after 3 attempts)\n", "")
            default:
                return ("Error: the request to 127.0.0.1 failed: ", "(after 3 attempts)\n")
            }
        }
    }

    /// Where the CLI is sent for a fault, and what the servers saw.
    struct Target {
        var baseURL: URL
        var transactionID = "ok"
        var fakeAppStore: FakeAppStore?
        var faultServer: FaultServer?
        /// Kept bound until the target goes away.
        var refusingPort: RefusingPort?

        /// Every token a server received (waiting for `requests` of them), and everything the fault
        /// server recorded.
        func finish(requests: Int) async throws -> (tokens: [String], events: [FaultServerEvent]) {
            let tokens = try await fakeAppStore?.log(count: requests).compactMap(\.token) ?? []
            let events = try await faultServer?.stop() ?? []
            return (tokens, events)
        }
    }

    static func target(for fault: Fault) async throws -> Target {
        switch fault {
        case .connectionRefused:
            let refusing = try RefusingPort()
            return Target(baseURL: refusing.baseURL, refusingPort: refusing)
        case .resetMidBody, .slowLoris, .rateLimitStorm, .garbageRetryAfter:
            let server = try await FakeAppStore()
            let id =
                switch fault {
                case .resetMidBody: "reset_100"
                case .slowLoris: "trickle_100_3000"
                case .rateLimitStorm: "ratelimitin_1000"
                default: "ratelimithex_" + "1.5".utf8.map { String(format: "%02x", $0) }.joined()
                }
            return Target(baseURL: server.baseURL, transactionID: id, fakeAppStore: server)
        case .dnsFailure:
            return Target(baseURL: try #require(URL(string: "https://api.storekit-sandbox.invalid")))
        case .tlsToPlainHTTP, .tlsUntrustedCertificate:
            let server = try await FaultServer.start(fault == .tlsToPlainHTTP ? .plain : .tls)
            return Target(baseURL: server.baseURL, faultServer: server)
        }
    }

    @Test(
        "fetch against a faulty server: one Error: line, exit status, time bound, no secrets",
        .requires(.pythonCryptography),
        arguments: Fault.allCases
    )
    func fault(_ fault: Fault) async throws {
        let target = try await Self.target(for: fault)
        let arguments = [
            "fetch", "groups", "--transaction-id", target.transactionID, "--timeout", "\(fault.timeout)",
            "--key-id", FakeAppStore.keyID, "--issuer-id", FakeAppStore.issuerID, "--bundle-id", FakeAppStore.bundleID,
            "--private-key", TestFiles.fixture("test-key.p8").path, "--base-url", target.baseURL.absoluteString,
        ]
        let result = try await runProcess(
            try FetchCommandTests.binary(),
            arguments,
            environment: FetchCommandTests.environment()
        )
        let (tokens, events) = try await target.finish(requests: fault == .slowLoris ? 1 : 3)
        #expect(result.status == fault.status)
        #expect(result.standardOutput == "")
        #expect(result.standardError.hasPrefix(fault.message.prefix), "\(result.standardError)")
        #expect(result.standardError.hasSuffix(fault.message.suffix), "\(result.standardError)")
        #expect(result.standardError.filter { $0 == "\n" }.count == 1)
        // --timeout bounds the whole request: the message and the number of requests the servers
        // saw prove it (a slow loris gets no second attempt). The wall clock only proves the
        // process ends rather than hangs; its window is wide because starting a process and
        // loading the key take seconds on a busy machine (yet well under the slow loris's five
        // minutes, 3,000 bytes at one every 100 ms).
        #expect(result.elapsed < .seconds(fault.timeout + 100))
        let scan = try SecretScan(tokens: tokens)
        scan.check(result)
        for event in events {
            scan.check(String(decoding: event.data, as: UTF8.self), "what the fault server received")
        }
        switch fault {
        case .slowLoris:
            #expect(tokens.count == 1)
        case .resetMidBody, .rateLimitStorm, .garbageRetryAfter:
            #expect(tokens.count == 3)
        case .tlsToPlainHTTP:
            #expect(events.map(\.event) == ["connection", "connection", "connection"])
        case .tlsUntrustedCertificate:
            #expect(events.map(\.event) == ["handshake-failed", "handshake-failed", "handshake-failed"])
        default:
            break
        }
    }
}
