import Foundation
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

@Suite("Freshness policy: one timeline for every window, with no clock, cache or service")
struct FreshnessPolicyTests {
    /// Time to live 300 s, refresh after 225 s (spread 30 s), stale-if-error 60 s, maximum staleness
    /// 3,300 s (nothing served past an hour), negative answers 30 s.
    static let policy: FreshnessPolicy = {
        var policy = FreshnessPolicy(timeToLive: .seconds(300))
        policy.staleIfError = .seconds(60)
        return policy
    }()

    /// No refresh ahead, no stale answers: a fixed time to live of 300 s.
    static let fixed: FreshnessPolicy = {
        var policy = FreshnessPolicy(timeToLive: .seconds(300))
        policy.refreshAfter = nil
        policy.maximumStaleness = .zero
        return policy
    }()

    static let fetchedAt = Date(timeIntervalSince1970: 1_800_000_000)

    struct Row: Sendable, CustomTestStringConvertible {
        var kind: CachedGroupsAnswer.Kind
        var age: Double
        var circumstance: FreshnessPolicy.Circumstance = .normal
        var draw: Double = 0
        var fixed = false
        var expected: FreshnessPolicy.Verdict
        var testDescription: String {
            "\(fixed ? "fixed: " : "")\(kind) at \(age) s, \(circumstance), draw \(draw) → \(expected)"
        }
    }

    static let rows: [Row] = [
        Row(kind: .groups, age: 0, expected: .fresh),
        Row(kind: .groups, age: 224.999, expected: .fresh),
        Row(kind: .groups, age: 225, expected: .refreshDue),
        Row(kind: .groups, age: 239.999, draw: 0.5, expected: .fresh),
        Row(kind: .groups, age: 240, draw: 0.5, expected: .refreshDue),
        Row(kind: .groups, age: 299.999, draw: 1, expected: .refreshDue),
        Row(kind: .groups, age: 299.999, circumstance: .budgetShort, expected: .refreshDue),
        Row(kind: .groups, age: 300, expected: .expired),
        Row(kind: .groups, age: 300, circumstance: .budgetShort, expected: .stale(.budget)),
        Row(kind: .groups, age: 3599.999, circumstance: .budgetShort, expected: .stale(.budget)),
        Row(kind: .groups, age: 3600, circumstance: .budgetShort, expected: .expired),
        Row(kind: .groups, age: 300, circumstance: .fetchFailed, expected: .stale(.error)),
        Row(kind: .groups, age: 359.999, circumstance: .fetchFailed, expected: .stale(.error)),
        Row(kind: .groups, age: 360, circumstance: .fetchFailed, expected: .expired),
        Row(kind: .notFound, age: 0, expected: .fresh),
        Row(kind: .notFound, age: 29.999, circumstance: .budgetShort, expected: .fresh),
        Row(kind: .notFound, age: 30, expected: .expired),
        Row(kind: .notFound, age: 30, circumstance: .budgetShort, expected: .expired),
        Row(kind: .notFound, age: 30, circumstance: .fetchFailed, expected: .expired),
        // Without a refresh ahead a fresh answer is never due; a zero maximum staleness is a fixed time to live.
        Row(kind: .groups, age: 299.999, draw: 0.99, fixed: true, expected: .fresh),
        Row(kind: .groups, age: 300, circumstance: .budgetShort, fixed: true, expected: .expired),
        Row(kind: .groups, age: 300, circumstance: .fetchFailed, fixed: true, expected: .expired),
    ]

    @Test("the verdict at every boundary", arguments: rows)
    func verdict(_ row: Row) {
        let now = Self.fetchedAt.addingTimeInterval(row.age)
        let verdict = (row.fixed ? Self.fixed : Self.policy).verdict(
            row.kind,
            fetchedAt: Self.fetchedAt,
            now: now,
            circumstance: row.circumstance,
            draw: row.draw
        )
        #expect(verdict == row.expected)
    }

    @Test("refresh points: the spread moves them by the draw, never to the time to live or past it")
    func refreshPoints() {
        let points = [0, 0.5, 1, 7, -1].map { Self.policy.refreshPoint(draw: $0) }
        #expect(points == [225, 240, 255, 255, 225].map { Duration.seconds($0) })
        var wide = Self.policy
        wide.refreshSpread = .seconds(600)
        #expect(wide.refreshPoint(draw: 1) == .milliseconds(299_999))
        var none = Self.policy
        none.refreshSpread = .zero
        #expect(none.refreshPoint(draw: 0.9) == .seconds(225))
    }

    @Test("draws are fixed per customer and fetch, and spread evenly over customers fetched together")
    func draws() {
        let one = FreshnessPolicy.draw(customerID: "c1", fetchedAt: Self.fetchedAt)
        #expect(one == FreshnessPolicy.draw(customerID: "c1", fetchedAt: Self.fetchedAt))
        #expect(one != FreshnessPolicy.draw(customerID: "c1", fetchedAt: Self.fetchedAt.addingTimeInterval(0.001)))
        // 10,000 customers fetched in the same millisecond: every tenth of the spread gets close to a tenth of them.
        var deciles = [Int](repeating: 0, count: 10)
        for index in 0..<10_000 {
            let draw = FreshnessPolicy.draw(customerID: "customer-\(index)", fetchedAt: Self.fetchedAt)
            #expect(draw >= 0 && draw < 1)
            deciles[min(9, Int(draw * 10))] += 1
        }
        #expect(deciles.allSatisfy { (900...1100).contains($0) }, "\(deciles)")
    }

    /// The windows were derived only in `init(timeToLive:)`: assigning 1,800 s on a default policy
    /// kept the 225 s refresh point and 3,300 s staleness, and 120 s was refused.
    @Test(
        "the windows a time to live implies, made with it or assigned it alone",
        arguments: [60, 120, 300, 1800, 3600, 7200]
    )
    func windowsOfATimeToLive(timeToLiveSeconds: Int) {
        let policy = FreshnessPolicy(timeToLive: .seconds(timeToLiveSeconds))
        #expect(policy.timeToLive == .seconds(timeToLiveSeconds))
        #expect(policy.refreshAfter == .seconds(timeToLiveSeconds) * 3 / 4)
        #expect(policy.refreshSpread == .seconds(timeToLiveSeconds) / 10)
        #expect(policy.staleIfError == .zero)
        #expect(policy.maximumStaleness == max(.zero, .seconds(3600 - timeToLiveSeconds)))
        #expect(policy.negativeTimeToLive == .seconds(30))
        // Answers are kept as long as they may be served.
        #expect(policy.lifetime(of: .groups) == .seconds(max(3600, timeToLiveSeconds)))
        #expect(policy.lifetime(of: .notFound) == .seconds(30))
        #expect(policy.problem == nil)
        var assigned = FreshnessPolicy()
        assigned.timeToLive = .seconds(timeToLiveSeconds)
        #expect(assigned == policy)
        var configuration = GroupDecisionService.Configuration()
        configuration.freshness.timeToLive = .seconds(timeToLiveSeconds)
        #expect(configuration.freshness == policy)
    }

    /// The cap at `timeToLive - 1 ms` put the point below `refreshAfter` (even negative) for a time
    /// to live under a millisecond, which the validation accepts: a refresh per hit.
    @Test("the refresh point is never before refreshAfter")
    func refreshPointNeverBeforeRefreshAfter() {
        var policy = FreshnessPolicy(timeToLive: .microseconds(500))
        policy.refreshAfter = .microseconds(250)
        #expect(policy.problem == nil)
        #expect(policy.refreshPoint(draw: 0) == .microseconds(250))
        #expect(policy.verdict(.groups, fetchedAt: Self.fetchedAt, now: Self.fetchedAt) == .fresh)
        var near = FreshnessPolicy(timeToLive: .seconds(1))
        near.refreshAfter = .microseconds(999_500)
        #expect(near.refreshPoint(draw: 0) == .microseconds(999_500))
    }

    /// The other half of following the time to live: a window the caller assigned is theirs, and
    /// a later time to live moves only the windows still derived from it.
    @Test("a window once assigned stays as assigned when the time to live changes")
    func assignedWindowsStay() {
        var policy = FreshnessPolicy()
        policy.refreshAfter = .seconds(100)
        policy.maximumStaleness = .zero
        policy.timeToLive = .seconds(600)
        #expect(policy.refreshAfter == .seconds(100))
        #expect(policy.refreshSpread == .seconds(60))
        #expect(policy.maximumStaleness == .zero)
        #expect(policy.lifetime(of: .groups) == .seconds(600))
        policy.refreshAfter = nil
        policy.refreshSpread = .zero
        policy.timeToLive = .seconds(60)
        #expect(policy.refreshAfter == nil)
        #expect(policy.refreshSpread == .zero)
        #expect(policy.refreshPoint(draw: 0.5) == nil)
        #expect(policy != FreshnessPolicy(timeToLive: .seconds(60)))
    }

    @Test("answers fetched together come due apart, each at its own refresh point; without the spread, at 225 s")
    func spreadOverCustomers() throws {
        var none = FreshnessPolicy()
        none.refreshSpread = .zero
        var points: Set<Duration> = []
        for index in 0..<20 {
            let customerID = "c\(index)"
            let draw = FreshnessPolicy.draw(customerID: customerID, fetchedAt: Self.fetchedAt)
            let point = try #require(FreshnessPolicy().refreshPoint(draw: draw))
            #expect(point >= .seconds(225) && point < .seconds(255))
            points.insert(point)
            let at = { (policy: FreshnessPolicy, now: Date) in
                policy.verdict(.groups, fetchedAt: Self.fetchedAt, now: now, customerID: customerID)
            }
            // Points are whole milliseconds: half of one either side is clear of `Date`'s rounding.
            let due = Self.fetchedAt + Double(point.components.seconds) + Double(point.components.attoseconds) / 1e18
            #expect(at(FreshnessPolicy(), due - 0.0005) == .fresh)
            #expect(at(FreshnessPolicy(), due + 0.0005) == .refreshDue)
            #expect(at(none, Self.fetchedAt + 224.999) == .fresh)
            #expect(at(none, Self.fetchedAt + 225) == .refreshDue)
        }
        // Without the spread all twenty would come due at 225 seconds.
        #expect(points.count == 20)
    }

    /// `==` compared the effective windows only, not whether each follows the time to live: two
    /// equal policies differed after the same assignment (refreshAfter 1,350 s against 225 s).
    @Test("two equal policies stay equal after the same assignment of the time to live")
    func equalPoliciesStayEqual() {
        var following = FreshnessPolicy()
        var assigned = FreshnessPolicy()
        assigned.refreshAfter = .seconds(225)
        #expect(following.refreshAfter == assigned.refreshAfter)
        #expect(following != assigned)
        var alsoAssigned = FreshnessPolicy()
        alsoAssigned.refreshAfter = .seconds(225)
        #expect(assigned == alsoAssigned)
        #expect(assigned.hashValue == alsoAssigned.hashValue)
        var alsoFollowing = FreshnessPolicy()
        following.timeToLive = .seconds(1800)
        alsoFollowing.timeToLive = .seconds(1800)
        assigned.timeToLive = .seconds(1800)
        alsoAssigned.timeToLive = .seconds(1800)
        #expect(following == alsoFollowing)
        #expect(assigned == alsoAssigned)
        #expect(following.refreshAfter == .seconds(1350))
        #expect(assigned.refreshAfter == .seconds(225))
    }

    /// `problem` accepted any time to live, and `refreshPoint(draw:)` trapped converting the spread
    /// of `.seconds(Int64.max)` to milliseconds in an `Int64`; `min(max(draw, 0), 1)` kept a NaN,
    /// and `Int64(NaN)` trapped.
    @Test("a policy past ten years is refused, and refreshPoint never traps; a NaN draw reads as 0")
    func hugePolicyRefusedAndNoTrap() async {
        #expect(
            FreshnessPolicy(timeToLive: .seconds(Int64.max)).problem
                == "timeToLive must be at most 10 years (315360000 seconds), not 9223372036854775807 seconds"
        )
        let tenYears = Duration.seconds(10 * 365 * 24 * 3600)
        #expect(FreshnessPolicy(timeToLive: tenYears).problem == nil)
        var tooLong = FreshnessPolicy(timeToLive: tenYears)
        tooLong.maximumStaleness = .seconds(1)
        #expect(tooLong.problem == "timeToLive plus maximumStaleness must be at most 10 years")
        let huge = FreshnessPolicy(timeToLive: .seconds(Int64.max))
        #expect(huge.refreshPoint(draw: 1) == huge.refreshAfter.map { $0 + huge.refreshSpread })
        #expect(FreshnessPolicy().refreshPoint(draw: .nan) == .seconds(225))
        #expect(
            FreshnessPolicy().verdict(.groups, fetchedAt: Self.fetchedAt, now: Self.fetchedAt + 230, draw: .nan)
                == .refreshDue
        )
        await #expect(processExitsWith: .success) {
            _ = FreshnessPolicy(timeToLive: .seconds(Int64.max)).refreshPoint(draw: 1)
            _ = FreshnessPolicy().refreshPoint(draw: .nan)
        }
    }
}
