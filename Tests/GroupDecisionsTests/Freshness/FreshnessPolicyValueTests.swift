import Foundation
import Testing

@testable import GroupDecisions

@Suite("FreshnessPolicy as a value: equality, bounds, and refresh points that never trap")
struct FreshnessPolicyValueTests {
    /// Equal policies stay equal after the same assignment.
    ///
    /// `==` compared the effective windows only, not whether they follow the time to live, so two
    /// equal policies stopped being equal after the same assignment (after `timeToLive = 1800` on
    /// both, refreshAfter 1,350 s against 225 s). Equality now also compares whether each window
    /// follows the time to live: a policy whose refresh point was assigned differs from one whose
    /// refresh point follows, and equal policies stay equal.
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

    /// A policy past ten years is refused, and no policy traps.
    ///
    /// The public `FreshnessPolicy.problem` accepted any positive time to live, while
    /// `refreshPoint(draw:)` converted the drawn share of the spread to milliseconds in an `Int64`:
    /// with `timeToLive = .seconds(Int64.max)` the default spread (about 9.2e20 ms) trapped for any
    /// draw above about 0.01. Now every window is bounded at ten years, as in the service's
    /// configuration, and the point never traps, whatever the policy.
    @Test("a policy past ten years is refused, and refreshPoint never traps")
    func hugePolicyRefusedAndNoTrap() async {
        #expect(
            FreshnessPolicy(timeToLive: .seconds(Int64.max)).problem
                == "timeToLive must be at most 10 years (315360000 seconds), not 9223372036854775807 seconds"
        )
        let tenYears = Duration.seconds(10 * 365 * 24 * 3600)
        #expect(FreshnessPolicy(timeToLive: tenYears).problem == nil)
        var tooLong = FreshnessPolicy(timeToLive: tenYears)
        tooLong.maximumStaleness = .seconds(1)
        #expect(tooLong.problem != nil)
        let huge = FreshnessPolicy(timeToLive: .seconds(Int64.max))
        #expect(huge.refreshPoint(draw: 1) == huge.refreshAfter.map { $0 + huge.refreshSpread })
        await #expect(processExitsWith: .success) {
            _ = FreshnessPolicy(timeToLive: .seconds(Int64.max)).refreshPoint(draw: 1)
        }
    }

    /// A NaN draw reads as 0.
    ///
    /// `refreshPoint(draw:)` documented its draw as clamped, but `min(max(draw, 0), 1)` kept a NaN,
    /// and `Int64(NaN)` trapped. A NaN draw now reads as 0: the point is `refreshAfter` itself.
    @Test("a NaN draw reads as 0, not a trap")
    func nanDrawDoesNotTrap() async {
        #expect(FreshnessPolicy().refreshPoint(draw: .nan) == .seconds(225))
        let fetchedAt = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(
            FreshnessPolicy().verdict(.groups, fetchedAt: fetchedAt, now: fetchedAt + 230, draw: .nan) == .refreshDue
        )
        await #expect(processExitsWith: .success) {
            _ = FreshnessPolicy().refreshPoint(draw: .nan)
        }
    }
}
