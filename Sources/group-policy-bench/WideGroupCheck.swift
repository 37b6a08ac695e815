import Foundation
import GroupPolicy

/// One rule `{"productId": "*", "role": "ADMIN"}` granting 100 capabilities, and one group of
/// 10,000 distinct ADMIN role entries: a million grants from one rule and one group, each kept.
///
/// What one group's evaluation costs as its role entries grow, on every path: the fast path, the
/// full decision, its JSON with provenance, and explaining one capability.
enum WideGroupCheck {
    static let (capabilities, entries) = (100, 10_000)

    struct Result {
        var grants: Int
        var fast: Statistics
        var evaluate: Statistics
        var encode: Statistics
        var explain: Statistics

        var json: String {
            #"{"wide_group":true,"K":\#(WideGroupCheck.capabilities),"entries":\#(WideGroupCheck.entries),"#
                + #""grants":\#(grants),"fast_us":\#(format(fast.median / 1000, decimals: 1)),"#
                + #""evaluate_ms":\#(format(evaluate.median / 1e6, decimals: 1)),"#
                + #""evaluate_ms_min":\#(format(evaluate.minimum / 1e6, decimals: 1)),"#
                + #""evaluate_ms_max":\#(format(evaluate.maximum / 1e6, decimals: 1)),"#
                + #""encode_ms":\#(format(encode.median / 1e6, decimals: 1)),"#
                + #""explain_ms":\#(format(explain.median / 1e6, decimals: 1))}"#
        }

        var text: String {
            var text = "wide group: one rule granting \(WideGroupCheck.capabilities) capabilities through any "
            text += "product's ADMIN entry, one group of \(WideGroupCheck.entries) distinct entries "
            text += "(\(grants) grants), median of \(evaluate.sorted.count) runs\n"
            text += "  fast path \(format(fast.median / 1000, decimals: 1)) µs, "
            text += "full decision (wide_group_evaluate_ms) \(format(evaluate.median / 1e6, decimals: 1)) ms "
            text += "(min \(format(evaluate.minimum / 1e6, decimals: 1)), "
            text += "max \(format(evaluate.maximum / 1e6, decimals: 1))), "
            text += "its JSON with provenance \(format(encode.median / 1e6, decimals: 1)) ms, "
            text += "explaining one capability \(format(explain.median / 1e6, decimals: 1)) ms\n"
            return text
        }
    }

    static func run(quick: Bool) throws(BenchError) -> Result {
        let names = (0..<capabilities).map { "cap\($0)" }
        let json =
            #"{"format":"group-policy/v1","id":"wide","capabilities":{"#
            + names.map { #""\#($0)":"\#($0)""# }.joined(separator: ",")
            + #"},"rules":[{"id":"admins","capabilities":["#
            + names.map { #""\#($0)""# }.joined(separator: ",")
            + #"],"match":{"productId":"*","role":"ADMIN"}}]}"#
        let (policy, _) = try timedLoads(1, failure: "the wide-group policy does not load") {
            () throws(GroupPolicyError) in try Policy(jsonBytes: Array(json.utf8))
        }
        let response = GetCustomerGroupsResponse(groups: [
            GroupEntry(
                groupID: "100000000000000001",
                groupType: .organization,
                roles: (0..<entries).map { RoleEntry(productID: "p\($0)", role: .admin) }
            )
        ])
        let runs = quick ? 1 : 5
        func timed(_ operation: () -> Int) -> Statistics {
            Statistics(timePerInput(count: 1, repetitions: 1, passes: runs) { _ in operation() }.samples)
        }
        let decision = policy.evaluate(response)
        guard decision.grantCount == capabilities * entries,
            Set(policy.capabilities(for: response).names) == Set(decision.capabilities.names)
        else {
            throw BenchError("the wide group's decision is not the expected one (\(decision.grantCount) grants)")
        }
        return Result(
            grants: decision.grantCount,
            fast: timed { policy.capabilities(for: response).count },
            evaluate: timed { policy.evaluate(response).grantCount },
            encode: timed { decision.jsonBytes(includingProvenance: true).count },
            explain: timed { (try? policy.explain("cap0", for: response))?.groups.first?.grants.count ?? -1 }
        )
    }
}
