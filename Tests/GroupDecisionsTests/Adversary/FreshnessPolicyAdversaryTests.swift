import Foundation
import Testing

@testable import GroupDecisions

@Suite("Adversary: FreshnessPolicy as a value")
struct FreshnessPolicyAdversaryTests {
    /// Defect: `==` compares the effective windows only, not whether they follow the time to live,
    /// so two equal policies stop being equal after the same assignment (Equatable promises
    /// substitutability). Observed: after `timeToLive = 1800` on both, refreshAfter 1350 s vs 225 s.
    @Test("two equal policies stay equal after the same assignment of the time to live")
    func equalPoliciesStayEqual() {
        var following = FreshnessPolicy()
        var assigned = FreshnessPolicy()
        assigned.refreshAfter = .seconds(225)
        #expect(following == assigned)
        #expect(following.hashValue == assigned.hashValue)
        following.timeToLive = .seconds(1800)
        assigned.timeToLive = .seconds(1800)
        #expect(following == assigned, "refreshAfter \(String(describing: following.refreshAfter)) vs \(String(describing: assigned.refreshAfter))")
    }

    /// Defect: the public `FreshnessPolicy.problem` accepts any positive time to live, while
    /// `refreshPoint(draw:)` converts the drawn share of the spread to milliseconds in an `Int64`:
    /// with `timeToLive = .seconds(Int64.max)` (valid per `problem`: `nil`), the default spread
    /// (a tenth, about 9.2e17 s, 9.2e20 ms) traps for any draw above about 0.01. Only the service's
    /// configuration bounds durations at 10 years.
    @Test("a policy whose problem is nil does not trap in refreshPoint")
    func validPolicyDoesNotTrap() async {
        #expect(FreshnessPolicy(timeToLive: .seconds(Int64.max)).problem == nil)
        // On main the child process dies: refreshPoint(draw: 1) traps (Double to Int64 out of range).
        await #expect(processExitsWith: .success) {
            let policy = FreshnessPolicy(timeToLive: .seconds(Int64.max))
            if policy.problem == nil { _ = policy.refreshPoint(draw: 1) }
        }
    }

    /// Defect: `refreshPoint(draw:)` documents its draw as clamped, but `min(max(draw, 0), 1)` keeps
    /// a NaN, and `Int64(NaN)` traps: `FreshnessPolicy().refreshPoint(draw: .nan)` (and
    /// `verdict(..., draw: .nan)` past refreshAfter) kills the process instead of answering.
    @Test("a NaN draw is clamped, not a trap")
    func nanDrawDoesNotTrap() async {
        // On main the child process dies in refreshPoint (Double to Int64 of NaN).
        await #expect(processExitsWith: .success) {
            _ = FreshnessPolicy().refreshPoint(draw: .nan)
        }
    }
}
