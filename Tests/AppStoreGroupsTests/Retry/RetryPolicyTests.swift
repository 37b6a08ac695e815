import Foundation
import ServingTestSupport
import Testing

@testable import AppStoreGroups

@Suite("Retry policy")
struct RetryPolicyTests {
    @Test("backoff doubles from the initial wait up to the maximum; jitter takes a random share of the wait off")
    func backoff() {
        let policy = RetryPolicy(initialBackoff: .milliseconds(500), maximumBackoff: .seconds(3), jitter: 0)
        let waits = (1...6).map { policy.backoff(beforeRetry: $0, random: 0.99) }
        #expect(waits == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(3), .seconds(3), .seconds(3)])
        let jittered = RetryPolicy(initialBackoff: .seconds(1), jitter: 0.5)
        #expect(jittered.backoff(beforeRetry: 1, random: 0) == .seconds(1))
        #expect(jittered.backoff(beforeRetry: 1, random: 0.5) == .milliseconds(750))
        #expect(jittered.backoff(beforeRetry: 2, random: 1) == .seconds(1))
    }

    @Test(
        "the default policy's waits stay within its jitter bounds against the real server",
        .requires(.pythonCryptography)
    )
    func defaultPolicyBounds() async throws {
        let server = try await FakeAppStore()
        let time = RecordingTimeSource()
        let error = await expectError {
            try await server.client(timeSource: time.timeSource).customerGroups(anyTransactionID: "generalInternal")
        }
        #expect(error?.attempts == 3)
        let sleeps = time.sleeps
        #expect(sleeps.count == 2)
        #expect(sleeps.first.map { $0 > .milliseconds(250) && $0 <= .milliseconds(500) } == true)
        #expect(sleeps.last.map { $0 > .milliseconds(500) && $0 <= .seconds(1) } == true)
    }

    // Backoffs of 0.5 s, 1 s, 2 s … (the defaults) without jitter.
    static let totalTwoSeconds = RetryPolicy(maximumAttempts: 10, maximumTotalWait: .seconds(2), jitter: 0)
    static let totalExactly = RetryPolicy(maximumTotalWait: .milliseconds(1_500), jitter: 0)
    static let totalZero = RetryPolicy(maximumAttempts: 3, maximumTotalWait: .zero, jitter: 0)
    /// Long waits, spent on the stepping clock only, so the attempts' real time is nothing beside
    /// them (and short enough for the tokens' iat to pass the server's check).
    static let callFiftySeconds = RetryPolicy(
        maximumTotalWait: .seconds(600),
        initialBackoff: .seconds(20),
        maximumBackoff: .seconds(600),
        jitter: 0,
        maximumCallDuration: .seconds(50)
    )
    /// Only the call's bound stops the wait: the waits may last two hours, the Retry-After is an
    /// hour away, and the call may take a minute (which no first attempt reaches on a busy machine).
    static let callOneMinute = RetryPolicy(
        maximumRateLimitWait: .seconds(7200),
        maximumTotalWait: .seconds(7200),
        maximumCallDuration: .seconds(60)
    )

    /// Each row: the policy, the fake's answer, then the error's code, its attempts, the waits made,
    /// and whether the error carries Apple's instant.
    @Test(
        "the policy's bounds on waits and on the call end a call to the real server where they say",
        .requires(.pythonCryptography),
        arguments: [
            // Backoffs count toward maximumTotalWait: 0.5 s + 1 s; the next (2 s) would make 3.5 s.
            (totalTwoSeconds, "generalInternal", .generalInternalError, 3, [.milliseconds(500), .seconds(1)], false),
            // A wait that exactly reaches maximumTotalWait is made.
            (totalExactly, "generalInternal", .generalInternalError, 3, [.milliseconds(500), .seconds(1)], false),
            // maximumTotalWait zero: nothing is retried after a wait, but immediate retries still
            // are (a Retry-After already past asks for no wait at all).
            (totalZero, "generalInternal", .generalInternalError, 1, [], false),
            (totalZero, "ratelimit_1000000000000", .rateLimitExceeded, 3, [.zero, .zero], true),
            // maximumCallDuration: 20 s is made; the next backoff (40 s) would end at 60 s, past it.
            (callFiftySeconds, "generalInternal", .generalInternalError, 2, [.seconds(20)], false),
            // maximumCallDuration: a Retry-After past it ends the call at once with the instant.
            (callOneMinute, "ratelimitin_3600000", .rateLimitExceeded, 1, [], true),
        ] as [(RetryPolicy, String, AppStoreGroupsError.Code, Int, [Duration], Bool)]
    )
    func bounds(
        policy: RetryPolicy,
        id: String,
        code: AppStoreGroupsError.Code,
        attempts: Int,
        sleeps: [Duration],
        carriesInstant: Bool
    ) async throws {
        let server = try await FakeAppStore()
        // A clock that moves only by the waits, as if each were spent.
        let time = RecordingTimeSource(steppingFrom: Date())
        let error = await expectError {
            try await server.client(retryPolicy: policy, timeSource: time.timeSource)
                .customerGroups(anyTransactionID: id)
        }
        #expect(error?.code == code)
        #expect(error?.attempts == attempts)
        #expect((error?.retryAfter != nil) == carriesInstant)
        #expect(time.sleeps == sleeps)
        #expect(try await server.log(count: attempts).count == attempts)
    }

    @Test("maximumCallDuration cuts an attempt's timeout to the time left", .requires(.pythonCryptography))
    func callDurationCutsTimeout() async throws {
        let server = try await FakeAppStore()
        let policy = RetryPolicy(maximumCallDuration: .seconds(1))
        let error = await expectError {
            try await server.client(retryPolicy: policy, timeout: .seconds(10)).customerGroups(
                anyTransactionID: "slow_4000"
            )
        }
        // Without the bound the attempt waits out the server's 4 s and succeeds.
        #expect(error?.code == .timeout)
        #expect(error?.attempts == 1)
    }

    @Test("defaults and none")
    func presets() {
        #expect(RetryPolicy.default.maximumAttempts == 3)
        #expect(RetryPolicy.default.maximumRateLimitWait == .seconds(30))
        #expect(RetryPolicy.default.maximumTotalWait == .seconds(30))
        #expect(RetryPolicy.default.maximumCallDuration == nil)
        #expect(RetryPolicy.none.maximumAttempts == 1)
    }

    @Test("policies out of range are refused at configuration")
    func invalidPolicies() throws {
        let credentials = try FakeAppStore.credentials()
        for policy in [
            RetryPolicy(maximumAttempts: 0), RetryPolicy(jitter: 1.5), RetryPolicy(jitter: -0.1),
            RetryPolicy(initialBackoff: .seconds(-1)), RetryPolicy(maximumTotalWait: .milliseconds(-1)),
            RetryPolicy(maximumCallDuration: .zero), RetryPolicy(maximumCallDuration: .seconds(-1)),
        ] {
            #expect(throws: AppStoreGroupsError.self) {
                try AppStoreGroupsClient(server: .sandbox, credentials: credentials, retryPolicy: policy)
            }
        }
        #expect(throws: AppStoreGroupsError.self) {
            try AppStoreGroupsClient(server: .sandbox, credentials: credentials, timeout: .zero)
        }
    }

    @Test("Retry-After is read as a UNIX time in milliseconds, and nothing else")
    func retryAfterParsing() {
        let instant = Date(timeIntervalSince1970: 1_700_000_000.123)
        #expect(RetryAfter.instant("1700000000123") == instant)
        #expect(RetryAfter.instant(" 1700000000123 ") == instant)
        // What the fault tests send through the fake server, and a space among the digits.
        for garbage in FetcherFaultTests.garbageRetryAfter + ["1 700000000123"] {
            #expect(RetryAfter.instant(garbage) == nil, "\(garbage)")
        }
    }

    @Test("waits are rounded up to whole milliseconds; an instant in the past is no wait")
    func pastInstant() {
        let now = Date(timeIntervalSince1970: 1_700_000_010)
        func wait(until seconds: Double) -> Duration {
            Duration.roundedUp(from: now, to: Date(timeIntervalSince1970: seconds))
        }
        #expect(wait(until: 1_700_000_000) == .zero)
        #expect(wait(until: 1_700_000_012.5) == .milliseconds(2_500))
        #expect(wait(until: 1_700_000_010.0002) == .milliseconds(1))
    }
}
