/// When and how long the client waits before sending a failed request again.
///
/// - A 429 with a `Retry-After` instant (a UNIX time in milliseconds) is retried at that instant
///   when it is at most ``maximumRateLimitWait`` away; further away, the call fails at once with
///   the rate-limit error carrying the instant.
/// - A 429 whose `Retry-After` is missing, or is not a plausible UNIX time in milliseconds, a 5xx
///   answer (Apple's `GeneralInternalError` 5000000 and `GeneralInternalRetryableError` 5000001,
///   and proxies' 502, 503, 504), a timeout and a transport failure are retried after an
///   exponential backoff with jitter.
/// - 400, 401, 404 and every other answer, a redirect, an oversized or malformed body are never
///   retried: sending the same request again cannot change them.
/// - The waits of one call add up to at most ``maximumTotalWait``: when the next wait would pass
///   it, the call fails at once with the last failure, however many attempts are left.
///
/// - With ``maximumCallDuration`` set, one call ends by then: each attempt's timeout is cut to the
///   time left, and a wait that would reach it is not made.
///
/// So one call sends at most ``maximumAttempts`` requests and takes at most
/// ``maximumAttempts`` × the client's timeout + ``maximumTotalWait``, and never more than
/// ``maximumCallDuration`` when it is set.
///
/// Every attempt carries a freshly signed token.
public struct RetryPolicy: Sendable, Hashable {
    /// The most requests one call sends, the first included.
    ///
    /// At least 1; default 3.
    public var maximumAttempts: Int
    /// The longest the client waits for a `Retry-After` instant.
    ///
    /// Default 30 seconds.
    public var maximumRateLimitWait: Duration
    /// The longest the client waits in all between the attempts of one call, `Retry-After` waits
    /// and backoffs together.
    ///
    /// A wait that would take the total past it is not made: the call fails with the last
    /// failure instead. It bounds a storm of 429s whose `Retry-After` instants are each close
    /// enough to honour. Default 30 seconds.
    public var maximumTotalWait: Duration
    /// The wait before the first retry after a backoff-worthy failure.
    ///
    /// Each further retry doubles it. Default 0.5 seconds.
    public var initialBackoff: Duration
    /// The longest backoff.
    ///
    /// Default 8 seconds.
    public var maximumBackoff: Duration
    /// The fraction of each backoff that is random.
    ///
    /// From 0 (exactly ``initialBackoff`` × 2ⁿ) to 1 (anywhere from zero to it); spreads the
    /// retries of many clients. Default 0.5.
    public var jitter: Double
    /// The longest one call may take in all, every attempt and every wait together, or `nil` for
    /// no bound beyond the others.
    ///
    /// Each attempt's timeout is the client's timeout or the time left, whichever is shorter; a
    /// wait that would reach the bound is not made, and the call fails with the last failure.
    /// Default `nil`. `group-policy fetch --timeout` sets it (10 seconds unless given).
    public var maximumCallDuration: Duration?

    /// Creates a policy; every parameter defaults to the documented default.
    ///
    /// - Parameters:
    ///   - maximumAttempts: The most requests one call sends, the first included.
    ///   - maximumRateLimitWait: The longest wait for a `Retry-After` instant.
    ///   - maximumTotalWait: The longest all the waits of one call may add up to.
    ///   - initialBackoff: The wait before the first backoff retry.
    ///   - maximumBackoff: The longest backoff.
    ///   - jitter: The random fraction of each backoff, 0 to 1.
    ///   - maximumCallDuration: The longest one call may take in all, or `nil` for no such bound.
    public init(
        maximumAttempts: Int = 3,
        maximumRateLimitWait: Duration = .seconds(30),
        maximumTotalWait: Duration = .seconds(30),
        initialBackoff: Duration = .milliseconds(500),
        maximumBackoff: Duration = .seconds(8),
        jitter: Double = 0.5,
        maximumCallDuration: Duration? = nil
    ) {
        self.maximumAttempts = maximumAttempts
        self.maximumRateLimitWait = maximumRateLimitWait
        self.maximumTotalWait = maximumTotalWait
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.jitter = jitter
        self.maximumCallDuration = maximumCallDuration
    }

    /// Three attempts, a 30-second limit on rate-limit waits and on all waits together, backoff
    /// from 0.5 to 8 seconds with half of it random.
    public static let `default` = RetryPolicy()

    /// One attempt: nothing is ever retried.
    public static let none = RetryPolicy(maximumAttempts: 1)

    /// Why the policy cannot be used, or `nil` when it can.
    var problem: String? {
        if maximumAttempts < 1 { return "the retry policy's maximumAttempts must be at least 1" }
        if maximumRateLimitWait < .zero || maximumTotalWait < .zero || initialBackoff < .zero
            || maximumBackoff < .zero
        {
            return "the retry policy's waits must not be negative"
        }
        if !(0...1).contains(jitter) { return "the retry policy's jitter must be between 0 and 1" }
        if let maximumCallDuration, maximumCallDuration <= .zero {
            return "the retry policy's maximumCallDuration must be positive"
        }
        return nil
    }

    /// The backoff before retry number `retry` (1 for the first retry).
    ///
    /// - Parameters:
    ///   - retry: Which retry this is, from 1.
    ///   - random: A number in `0..<1`; the jitter takes that share of the random part off.
    /// - Returns: The wait.
    func backoff(beforeRetry retry: Int, random: Double) -> Duration {
        var wait = initialBackoff
        for _ in 1..<max(retry, 1) where wait < maximumBackoff {
            wait *= 2
        }
        wait = min(wait, maximumBackoff)
        return wait * (1 - jitter * random)
    }
}
