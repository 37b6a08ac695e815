public import AppStoreGroups
public import GroupDecisions
import GroupPolicy

/// The fleet's request budget: one token bucket per endpoint and environment, kept in Redis on
/// Redis's clock.
extension RedisGroupsCache {
    /// The longest a budget key outlives its last token taken: 30 days, however slow the rate.
    static let maximumBudgetLifetime = Duration.seconds(30 * 86_400)

    func budgetKey(_ endpoint: GroupsEndpoint, _ environment: StoreEnvironment) -> [UInt8] {
        Array("\(keyPrefix):\(environment.rawValue):budget:\(endpoint.name)".utf8)
    }

    /// How long a budget key outlives its last token taken, at least: a day, so that a quiet spell
    /// shorter than that ends with a full bucket, not one started again at its initial tokens.
    static let minimumBudgetLifetime = Duration.seconds(86_400)

    /// Takes a token from the bucket under `KEYS[1]`, or reserves the next.
    ///
    /// The bucket is a hash of `tokens` and `at` (the store's time in microseconds when they were
    /// counted), refilled at `ARGV[1]` tokens a second up to `ARGV[2]`; when none is banked, the
    /// next is reserved if it is due within `ARGV[3]` milliseconds. Answers `{1, wait}` (taken) or
    /// `{0, wait}` (not taken), in milliseconds.
    ///
    /// `TIME` is Redis's clock, the same for every process; a clock that went back refills
    /// nothing. A bucket the store does not hold (a new budget, or one lost to a flush, a restart
    /// or an eviction), or a value that is not a number, starts with `ARGV[5]` tokens: the burst
    /// less the reservations of callers that may still be waiting on a lost bucket, so a lost
    /// bucket costs at most one burst. The key lives `ARGV[4]` milliseconds after the last token
    /// taken: longer than a refill, so an idle bucket is full when it is next used. Sent twice,
    /// it takes two tokens: it is never sent again after a lost connection.
    ///
    /// With `ARGV[6]` (a refresh), a token is taken only when `1 + ARGV[6]` are banked, so that
    /// `ARGV[6]` stay for first fetches; none is reserved ahead, and the answer when none is taken
    /// is the wait until one could be.
    static let takeTokenScript = Array(
        """
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
        local rate = tonumber(ARGV[1])
        local burst = tonumber(ARGV[2])
        local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
        local tokens = tonumber(state[1])
        local at = tonumber(state[2])
        if tokens == nil or at == nil or tokens ~= tokens or at ~= at then
          tokens = math.max(0, math.min(burst, tonumber(ARGV[5])))
          at = now
        end
        if now > at then tokens = tokens + (now - at) * rate / 1000000 end
        tokens = math.min(burst, tokens)
        local wait = 0
        local reserve = tonumber(ARGV[6])
        if reserve then
          if tokens < 1 + reserve then
            return {0, math.min(math.ceil((1 + reserve - tokens) * 1000 / rate), 1e15)}
          end
        elseif tokens < 1 then
          wait = math.min(math.ceil((1 - tokens) * 1000 / rate), 1e15)
          if wait > tonumber(ARGV[3]) then return {0, wait} end
        end
        redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens - 1), 'at', string.format('%.0f', now))
        redis.call('PEXPIRE', KEYS[1], ARGV[4])
        return {1, wait}
        """.utf8
    )

    /// Takes one token from the fleet's budget for the endpoint in the environment, in one script
    /// on Redis's clock (`TIME`), under `<keyPrefix>:<environment>:budget:<endpoint>`.
    ///
    /// A bucket Redis does not hold starts with the budget's `initialTokens`. The key expires a
    /// day after the last token taken, or once a full bucket would have refilled and the longest
    /// wait passed when that is longer (at most 30 days), so a budget nobody uses costs no memory.
    /// The script is never sent twice: a call whose connection dies after sending it fails rather
    /// than risk taking two tokens.
    ///
    /// - Parameters:
    ///   - budget: The endpoint, the environment, a rate that is positive and finite, a burst of at
    ///     least 1 and finite, and initial tokens from 0 to the burst.
    ///   - maximumWait: The longest the caller would wait for a reserved token.
    /// - Returns: Whether a token was taken, and the wait.
    /// - Throws: `AppStoreGroupsError.Code.invalidArgument` for a rate, burst or initial tokens out of range,
    ///   `AppStoreGroupsError.Code.sharedCacheFailure` when Redis cannot answer.
    public func takeBudgetToken(
        from budget: FleetBudget,
        maximumWait: Duration
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        try await takeToken(budget, maximumWait: maximumWait, reserve: nil)
    }

    /// Takes one token for a refresh from the fleet's budget, in the same script on Redis's clock:
    /// only when one is banked now and `reserve` stay banked after; none is reserved ahead.
    ///
    /// - Parameters:
    ///   - budget: The endpoint, the environment, a rate that is positive and finite, a burst of at
    ///     least 1 and finite, and initial tokens from 0 to the burst.
    ///   - reserve: The tokens that must stay banked; at least 0 and finite.
    /// - Returns: Whether a token was taken (never with a wait), and the wait until one could be.
    /// - Throws: `AppStoreGroupsError.Code.invalidArgument` for a rate, burst, initial tokens or reserve out of
    ///   range, `AppStoreGroupsError.Code.sharedCacheFailure` when Redis cannot answer.
    public func takeBudgetToken(
        from budget: FleetBudget,
        keeping reserve: Double
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        guard reserve >= 0, reserve.isFinite else {
            throw AppStoreGroupsError(code: .invalidArgument, message: "a refresh's reserve must be at least 0")
        }
        return try await takeToken(budget, maximumWait: .zero, reserve: reserve)
    }

    private func takeToken(
        _ budget: FleetBudget,
        maximumWait: Duration,
        reserve: Double?
    ) async throws(AppStoreGroupsError) -> FleetBudgetToken {
        let ratePerSecond = budget.ratePerSecond
        let burst = budget.burst
        let initialTokens = budget.initialTokens
        guard ratePerSecond > 0, ratePerSecond.isFinite, burst >= 1, burst.isFinite, initialTokens >= 0,
            initialTokens <= burst
        else {
            throw AppStoreGroupsError(
                code: .invalidArgument,
                message: "a fleet budget needs a positive rate, a burst of at least 1 and initial tokens from 0 to it"
            )
        }
        let waitMilliseconds = maximumWait > .zero ? Self.milliseconds(maximumWait) : 0
        let refill = min(burst / ratePerSecond, Self.seconds(Self.maximumBudgetLifetime))
        // The wait is cut to 1,000 years (a wait of "forever" included): capped again here, so the
        // key's lifetime stays within the budget's.
        let longest = Self.milliseconds(Self.maximumBudgetLifetime)
        let lifetime = min(
            max(
                Int64((refill * 1000).rounded(.up)) + min(waitMilliseconds, longest) + 1000,
                Self.milliseconds(Self.minimumBudgetLifetime)
            ),
            longest
        )
        let arguments =
            [
                Array("EVAL".utf8), Self.takeTokenScript, Array("1".utf8),
                budgetKey(budget.endpoint, budget.environment),
                Array(String(ratePerSecond).utf8), Array(String(burst).utf8), Array(String(waitMilliseconds).utf8),
                Array(String(lifetime).utf8), Array(String(initialTokens).utf8),
            ] + (reserve.map { [Array(String($0).utf8)] } ?? [])
        let reply = try await call(arguments, "EVAL take-budget-token", isIdempotent: false)
        switch reply {
        case .array(let parts?) where parts.count == 2:
            guard case .integer(let taken) = parts[0], case .integer(let wait) = parts[1], wait >= 0 else {
                throw unexpected(reply, "EVAL take-budget-token")
            }
            switch taken {
            case 1: return .taken(wait: .milliseconds(wait))
            case 0: return .notTaken(wait: .milliseconds(wait))
            default: throw unexpected(reply, "EVAL take-budget-token")
            }
        default:
            throw unexpected(reply, "EVAL take-budget-token")
        }
    }
}
