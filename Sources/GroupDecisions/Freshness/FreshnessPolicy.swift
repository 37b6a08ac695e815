public import Foundation

/// Every window an answer from Apple lives through, as one timeline: when it is fresh, when it is
/// due for a refresh, when it may be served stale and why, and when it has expired.
///
/// A pure value: it reads no clock and holds no cache. The service asks it about each answer it
/// holds; tests ask it about instants they choose.
///
/// ```
/// groups answer (age = now - fetchedAt):
///
/// 0          refreshAfter (+ spread)      timeToLive           timeToLive + staleIfError
/// |----------------|--------------------------|----------------------|-------------------|
///    fresh          fresh, refresh due            stale-if-error: served stale when a fetch fails
///                   (served; one refresh          stale by budget: served stale while the
///                    starts in the background)    budget has no token to spare  ....... until
///                                                                      timeToLive + maximumStaleness,
///                                                                      the hard cap: expired after
///
/// not-found answer: fresh until negativeTimeToLive, then expired; never served stale.
/// ```
///
/// The vocabulary is Caffeine's and RFC 5861's: a time to live counted from the fetch (expire
/// after write), `refreshAfter` (refresh after write: the answer is still served while one refresh
/// runs), stale-if-error, and a hard cap on staleness past which nothing of the old answer is
/// served.
///
/// Answers fetched together would come due for a refresh together, and their refreshes would
/// reach Apple in one burst. Each answer's refresh point is therefore moved later by a share of
/// ``refreshSpread`` drawn for it (a bounded random spread): given the same draw, every process
/// computes the same point.
///
/// Two policies are equal when every window is, and each window follows the time to live or was
/// assigned alike: equal policies stay equal after the same assignment.
public struct FreshnessPolicy: Sendable, Hashable {
    /// How long an answer is served as fresh, counted from its fetch.
    ///
    /// Default 5 minutes. Apple sends no notification when a group or a role changes, so this is
    /// how stale a decision may be at worst while the budget lasts.
    public var timeToLive: Duration { didSet { updateSeconds() } }
    /// How far into its time to live an answer becomes due for a refresh ahead, or `nil` for
    /// never; less than ``timeToLive``.
    ///
    /// Default three quarters of the time to live, following ``timeToLive`` until this is
    /// assigned. A decision that finds an answer past this point is served from it at once while
    /// one refresh runs in the background.
    public var refreshAfter: Duration? {
        get { refreshAfterWindow.value(following: timeToLive * 3 / 4) }
        set { refreshAfterWindow = .assigned(newValue) }
    }
    /// The most each answer's refresh point moves after ``refreshAfter``, drawn per answer so that
    /// answers fetched together come due at different instants; always before ``timeToLive``.
    ///
    /// Default a tenth of the time to live, following ``timeToLive`` until this is assigned; zero
    /// turns the spread off.
    public var refreshSpread: Duration {
        get { refreshSpreadWindow.value(following: timeToLive / 10) }
        set { refreshSpreadWindow = .assigned(newValue) }
    }
    /// How long past ``timeToLive`` an answer may be served, marked stale, when fetching a fresh
    /// one fails.
    ///
    /// Default zero: off. Serving an answer Apple can no longer confirm is a grant from data the
    /// library cannot vouch for; turn it on (a minute, say) to ride out short outages when that
    /// trade is yours to make. Never past ``maximumStaleness``.
    public var staleIfError: Duration { didSet { updateSeconds() } }
    /// The hard cap: how long past ``timeToLive`` anything of an answer may be served, whatever
    /// the reason (the budget has no token to spare, or a fetch failed).
    ///
    /// Default an hour less the time to live (55 minutes for the default 5), following
    /// ``timeToLive`` until this is assigned, so that no answer older than an hour is served (or
    /// older than the time to live, when that is longer). Answers are kept this long past their
    /// time to live (in this process and in the shared cache) so that they can be served stale
    /// while the fleet's budget has no token to spare for refreshing them. Zero, with
    /// ``refreshAfter`` `nil`, is a fixed time to live.
    public var maximumStaleness: Duration {
        get { maximumStalenessWindow.value(following: max(.zero, .seconds(3600) - timeToLive)) }
        set { maximumStalenessWindow = .assigned(newValue) }
    }
    /// How long Apple's `TransactionIdNotFoundError` is remembered.
    ///
    /// Default 30 seconds: short, because a purchase that has just happened may not be known to
    /// the groups endpoints yet; long enough that a client retrying in a loop costs one request per
    /// period.
    public var negativeTimeToLive: Duration { didSet { updateSeconds() } }

    /// A policy for answers fresh for `timeToLive`: due for a refresh after three quarters of it,
    /// spread over a tenth of it, never stale on error, and never served past an hour (or past
    /// `timeToLive`, when that is longer).
    ///
    /// - Parameter timeToLive: How long an answer is fresh. Default 5 minutes.
    public init(timeToLive: Duration = .seconds(300)) {
        self.timeToLive = timeToLive
        self.staleIfError = .zero
        self.negativeTimeToLive = .seconds(30)
        updateSeconds()
    }

    /// A window derived from the time to live (moving with it) until the caller assigns it.
    private enum Window<Value: Hashable & Sendable>: Hashable, Sendable {
        case followsTimeToLive
        case assigned(Value)

        /// The value assigned, or `derived` from the time to live.
        func value(following derived: @autoclosure () -> Value) -> Value {
            if case .assigned(let value) = self { return value }
            return derived()
        }
    }

    private var refreshAfterWindow = Window<Duration?>.followsTimeToLive { didSet { updateSeconds() } }
    private var refreshSpreadWindow = Window<Duration>.followsTimeToLive { didSet { updateSeconds() } }
    private var maximumStalenessWindow = Window<Duration>.followsTimeToLive { didSet { updateSeconds() } }

    /// The windows in seconds, computed whenever one changes: a decision compares dates with them
    /// on every hit, and `Duration` arithmetic would cost more than the rest of the check.
    private struct Seconds: Hashable, Sendable {
        var timeToLive = 0.0
        var negativeTimeToLive = 0.0
        /// The earliest refresh point (``refreshAfter`` itself); infinity for never.
        var refreshAfter = Double.infinity
        /// How old a groups answer may be when served stale by budget (its lifetime), or on error.
        var budgetEnd = 0.0
        var errorEnd = 0.0
    }

    private var inSeconds = Seconds()

    private mutating func updateSeconds() {
        inSeconds = Seconds(
            timeToLive: Self.clampedSeconds(timeToLive),
            negativeTimeToLive: Self.clampedSeconds(negativeTimeToLive),
            refreshAfter: refreshAfter.map(Self.clampedSeconds) ?? .infinity,
            budgetEnd: Self.clampedSeconds(timeToLive + maximumStaleness),
            errorEnd: Self.clampedSeconds(timeToLive + min(staleIfError, maximumStaleness))
        )
    }

    /// ``seconds(_:)``, or an infinity for a duration too long to count in `Duration`'s components
    /// (only a sum of windows a policy refuses can be): computed on every assignment, it must not
    /// trap on a policy ``problem`` has not yet refused.
    private static func clampedSeconds(_ duration: Duration) -> Double {
        if duration > .seconds(Int64.max) { return .infinity }
        if duration < .seconds(Int64.min) { return -.infinity }
        return seconds(duration)
    }

    /// What the service is in when it asks about an answer.
    public enum Circumstance: Sendable, Hashable {
        /// Nothing in the way of a fetch.
        case normal
        /// The budget has no token to spare for a refresh (none banked beyond the reserve kept for
        /// first fetches, or a `Retry-After` instant holding, or Apple answered 429).
        case budgetShort
        /// A fetch was sent and failed with an error that says nothing about the customer.
        case fetchFailed
    }

    /// What may be done with an answer now.
    public enum Verdict: Sendable, Hashable {
        /// Served as it is.
        case fresh
        /// Served as it is; one refresh should start in the background.
        case refreshDue
        /// Past its time to live, but servable marked stale, for the reason given.
        case stale(GroupDecisionEvent.StaleReason)
        /// Not to be served: fetch again, or fail closed.
        case expired
    }

    /// What may be done with an answer of `kind` fetched at `fetchedAt`, at `now`.
    ///
    /// - Parameters:
    ///   - kind: What Apple answered.
    ///   - fetchedAt: When the answer was received.
    ///   - now: The instant asked about.
    ///   - circumstance: Whether the budget is short or a fetch has just failed. Default
    ///     ``Circumstance/normal``.
    ///   - draw: This answer's share of ``refreshSpread``, from 0 up to 1 (see ``draw(customerID:fetchedAt:)``).
    ///     Default 0: the refresh point is ``refreshAfter`` itself.
    /// - Returns: The verdict.
    public func verdict(
        _ kind: CachedGroupsAnswer.Kind,
        fetchedAt: Date,
        now: Date,
        circumstance: Circumstance = .normal,
        draw: Double = 0
    ) -> Verdict {
        verdict(kind, fetchedAt: fetchedAt, now: now, circumstance: circumstance) { draw }
    }

    /// ``verdict(_:fetchedAt:now:circumstance:draw:)`` for the customer's answer, whose draw is
    /// computed only when the answer is past ``refreshAfter``: before it (every hit in the first
    /// three quarters of the time to live, by default) the verdict is two comparisons.
    func verdict(
        _ kind: CachedGroupsAnswer.Kind,
        fetchedAt: Date,
        now: Date,
        circumstance: Circumstance = .normal,
        customerID: String
    ) -> Verdict {
        verdict(kind, fetchedAt: fetchedAt, now: now, circumstance: circumstance) {
            Self.draw(customerID: customerID, fetchedAt: fetchedAt)
        }
    }

    private func verdict(
        _ kind: CachedGroupsAnswer.Kind,
        fetchedAt: Date,
        now: Date,
        circumstance: Circumstance,
        draw: () -> Double
    ) -> Verdict {
        switch kind {
        case .notFound:
            return now < fetchedAt.addingTimeInterval(inSeconds.negativeTimeToLive) ? .fresh : .expired
        case .groups:
            if now < fetchedAt.addingTimeInterval(inSeconds.timeToLive) {
                // Every point is at or after `refreshAfter`: the draw is needed only past it.
                let age = now.timeIntervalSince(fetchedAt)
                guard age >= inSeconds.refreshAfter, let point = refreshPoint(draw: draw()) else { return .fresh }
                return age >= Self.seconds(point) ? .refreshDue : .fresh
            }
            switch circumstance {
            case .normal:
                return .expired
            case .budgetShort:
                return now < fetchedAt.addingTimeInterval(inSeconds.budgetEnd) ? .stale(.budget) : .expired
            case .fetchFailed:
                return now < fetchedAt.addingTimeInterval(inSeconds.errorEnd) ? .stale(.error) : .expired
            }
        }
    }

    /// How far into its time to live an answer with this draw comes due for a refresh, or `nil`
    /// when answers are never refreshed ahead.
    ///
    /// - Parameter draw: The answer's share of ``refreshSpread``, from 0 up to 1; clamped, and NaN
    ///   read as 0.
    /// - Returns: ``refreshAfter`` plus the drawn share of the spread: never before
    ///   ``refreshAfter``, and before ``timeToLive`` whenever the spread has room.
    public func refreshPoint(draw: Double) -> Duration? {
        guard let refreshAfter else { return nil }
        // The spread ends a millisecond before the time to live, so a due refresh runs while the
        // answer is still fresh; when there is no such room the point is `refreshAfter` itself,
        // never earlier.
        let room = min(refreshSpread, timeToLive - refreshAfter - .milliseconds(1))
        guard room > .zero else { return refreshAfter }
        let share = draw.isNaN ? 0 : min(max(draw, 0), 1)
        let milliseconds = (Self.seconds(room) * 1000 * share).rounded(.down)
        // Whole milliseconds, as a shared cache keeps times; a spread too long to count in them
        // (past any valid policy) moves the point by the whole room.
        let moved = milliseconds < 9e18 ? Duration.milliseconds(Int64(milliseconds)) : room
        return refreshAfter + moved
    }

    /// How long an answer of `kind` is kept after its fetch: as long as it may be served at all.
    ///
    /// - Parameter kind: What Apple answered.
    /// - Returns: ``timeToLive`` plus ``maximumStaleness`` for groups, ``negativeTimeToLive`` for
    ///   a not-found answer.
    public func lifetime(of kind: CachedGroupsAnswer.Kind) -> Duration {
        switch kind {
        case .groups: timeToLive + maximumStaleness
        case .notFound: negativeTimeToLive
        }
    }

    /// The draw of an answer: a number from 0 up to 1 fixed by the customer and the answer's fetch
    /// time, spread evenly over customers, so answers fetched together come due apart while every
    /// process computes the same refresh point for one answer.
    ///
    /// - Parameters:
    ///   - customerID: The customer the answer is for.
    ///   - fetchedAt: When the answer was received.
    /// - Returns: A number from 0 up to 1.
    public static func draw(customerID: String, fetchedAt: Date) -> Double {
        // FNV-1a over the id and the fetch time in milliseconds: stable across processes and runs,
        // unlike `Hasher`, which is seeded per process.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in customerID.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        let milliseconds = UInt64(bitPattern: Int64((fetchedAt.timeIntervalSince1970 * 1000).rounded(.down)))
        for shift in stride(from: 0, to: 64, by: 8) {
            hash = (hash ^ ((milliseconds >> UInt64(shift)) & 0xff)) &* 0x0000_0100_0000_01b3
        }
        // FNV-1a mixes its low bits well and its high bits poorly: a finaliser (MurmurHash3's)
        // spreads every bit before the top 53 are taken as a fraction (exact, always below 1).
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash = hash &* 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return Double(hash >> 11) / Double(UInt64(1) << 53)
    }

    /// Why the policy cannot be used, or `nil` when it can: one line naming the window.
    ///
    /// Every window is at most ten years, and so is the time to live plus the maximum staleness.
    public var problem: String? { problem(naming: "") }

    /// ``problem``, each window named after `prefix` (a service's configuration names them under
    /// `freshness.`).
    func problem(naming prefix: String) -> String? {
        let windows: [(String, Duration)] = [
            ("timeToLive", timeToLive), ("refreshAfter", refreshAfter ?? .zero), ("refreshSpread", refreshSpread),
            ("staleIfError", staleIfError), ("maximumStaleness", maximumStaleness),
            ("negativeTimeToLive", negativeTimeToLive),
        ]
        if let problem = DurationLimit.firstTooLong(windows.map { (prefix + $0.0, $0.1) }) { return problem }
        if timeToLive + maximumStaleness > DurationLimit.longest {
            return "\(prefix)timeToLive plus \(prefix)maximumStaleness must be at most 10 years"
        }
        if timeToLive <= .zero { return "\(prefix)timeToLive must be positive" }
        if let refreshAfter, !(refreshAfter > .zero && refreshAfter < timeToLive) {
            return "\(prefix)refreshAfter must be positive and less than \(prefix)timeToLive, or nil"
        }
        for (name, window) in windows.dropFirst(2) where window < .zero {
            return "\(prefix)\(name) must not be negative"
        }
        return nil
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
