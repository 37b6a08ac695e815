import GroupDecisions

/// One fleet budget as the model of the contract knows it: the tokens banked, between two bounds.
///
/// The model knows when each call ran only within the window it measured around the call (on the
/// suite's clock, an instant), so it keeps the least and the most the bucket can hold, widened by
/// the refill the window allows and narrowed by what each answer proves. A token taken when the
/// most is below one, a wait that no balance within the bounds gives, or a refusal when the least
/// is a whole token, is a mismatch.
struct BudgetBucketModel {
    let budget: FleetBudget
    /// The least and the most tokens banked, as of ``since``.
    private var low: Double
    private var high: Double
    /// The window (seconds on the model's timeline) of the last call that read the bucket, or
    /// `nil` before the first.
    private var since: (start: Double, end: Double)?
    /// Whether a token was ever taken: until then a store may not hold the bucket yet (a call that
    /// takes nothing need not write it), so it may not have refilled at all.
    private var held = false

    /// The error a store's arithmetic may add: a millionth of a token.
    private static let epsilon = 1e-6
    /// Waits are whole milliseconds, rounded up: a millisecond either way, and one for the
    /// store's own rounding of the caller's maximum wait.
    private static let waitSlack = 0.002

    /// A bucket the store does not hold yet: it starts with the budget's initial tokens.
    init(_ budget: FleetBudget) {
        self.budget = budget
        low = budget.initialTokens
        high = budget.initialTokens
    }

    /// What a token call's answer must be, as a requirement and the bounds it was judged by.
    struct Mismatch {
        var requirement: String
        var expected: String
    }

    static let overBudget =
        "a token is taken only when the budget holds one: at most its burst banked, refilled at its rate, "
        + "one bucket for every instance"
    static let banked = "a banked token is taken"
    static let waits =
        "a token reserved ahead comes with the wait until it is due, and only within the caller's maximum wait; "
        + "a token not taken comes with the wait until one could be"
    static let refresh =
        "a refresh takes a token only when the reserve stays banked after it, takes it then, and never reserves one ahead"

    /// The bounds at a call made within `window`, after the refill since the last call.
    private func refilled(_ window: (start: Double, end: Double), realTime: Bool) -> (Double, Double) {
        guard let since else { return (low, high) }
        let shortest = held ? max(0, window.start - since.end) : 0
        var longest = max(0, window.end - since.start)
        // Two clocks (the suite's and the store's) may drift apart by a thousandth, and a call may
        // be timed a few milliseconds off.
        if realTime { longest = longest * 1.001 + 0.005 }
        let rate = budget.ratePerSecond
        return (min(budget.burst, low + rate * shortest), min(budget.burst, high + rate * longest))
    }

    /// The balances (before the call) for which a store answers a wait of `wait` seconds until
    /// `need` tokens are banked.
    private func balances(forWait wait: Double, need: Double) -> (Double, Double) {
        let rate = budget.ratePerSecond
        return (need - (wait + Self.waitSlack) * rate, need - (wait - Self.waitSlack) * rate)
    }

    private func describe(_ low: Double, _ high: Double) -> String {
        func tokens(_ value: Double) -> String { String(format: "%.4f", value) }
        return low == high ? "\(tokens(low)) tokens banked" : "\(tokens(low)) to \(tokens(high)) tokens banked"
    }

    /// Judges `token`, the answer to a call made within `window` that could wait `maximumWait`
    /// seconds (`nil` for a refresh) keeping `reserve`, and keeps what it proves.
    mutating func observe(
        _ token: FleetBudgetToken,
        maximumWait: Double?,
        reserve: Double,
        window: (start: Double, end: Double),
        realTime: Bool
    ) -> Mismatch? {
        let (before, after) = refilled(window, realTime: realTime)
        let rate = budget.ratePerSecond
        let epsilon = Self.epsilon
        let need = maximumWait == nil ? 1 + reserve : 1
        let bounds = describe(before, after)
        var judged: (Double, Double)
        switch token {
        case .taken(let duration):
            let wait = ConformanceValues.seconds(duration)
            guard let maximumWait else {
                guard wait == 0, after + epsilon >= need else {
                    return Mismatch(requirement: Self.refresh, expected: "not taken (\(bounds), reserve \(reserve))")
                }
                low = max(before, need) - 1
                high = after - 1
                since = window
                held = true
                return nil
            }
            if wait == 0 {
                guard after + epsilon >= 1 else {
                    let due = (1 - after) / rate
                    return due <= maximumWait + Self.waitSlack
                        ? Mismatch(
                            requirement: Self.waits,
                            expected: "taken with a wait of \(Int(due * 1000)) ms or more (\(bounds))"
                        )
                        : Mismatch(requirement: Self.overBudget, expected: "not taken (\(bounds))")
                }
                judged = (max(before, 1), after)
            } else {
                let (least, most) = balances(forWait: wait, need: 1)
                judged = (max(before, least), min(after, most))
                guard wait <= maximumWait + Self.waitSlack, judged.0 <= judged.1 + epsilon else {
                    return Mismatch(
                        requirement: Self.waits,
                        expected: "a wait that \(bounds) give, at most the caller's \(Int(maximumWait * 1000)) ms"
                    )
                }
            }
            judged = (judged.0 - 1, judged.1 - 1)
        case .notTaken(let duration):
            let wait = ConformanceValues.seconds(duration)
            guard before < need + epsilon else {
                return Mismatch(
                    requirement: maximumWait == nil ? Self.refresh : Self.banked,
                    expected: "taken at once (\(bounds)\(maximumWait == nil ? ", reserve \(reserve)" : ""))"
                )
            }
            let (least, most) = balances(forWait: wait, need: need)
            judged = (max(before, least), min(after, most, need))
            if let maximumWait {
                // Not taken: no balance within the bounds has its token due within the maximum wait.
                judged.1 = min(judged.1, 1 - (maximumWait - Self.waitSlack) * rate)
            }
            guard judged.0 <= judged.1 + epsilon else {
                return Mismatch(
                    requirement: Self.waits,
                    expected: maximumWait.map {
                        "taken with its wait when due within the caller's \(Int($0 * 1000)) ms, else the wait "
                            + "until one could be (\(bounds))"
                    } ?? "the wait until one could be taken with the reserve banked (\(bounds), reserve \(reserve))"
                )
            }
        }
        if case .taken = token { held = true }
        low = min(judged.0, judged.1)
        high = judged.1
        since = window
        return nil
    }
}
