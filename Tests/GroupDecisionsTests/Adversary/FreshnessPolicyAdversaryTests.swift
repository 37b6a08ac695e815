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
}
