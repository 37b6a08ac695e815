import Foundation
import GroupPolicy

/// Generates the benchmark workload in the shape the README's Performance section describes, from
/// a seed.
///
/// Responses: 0-4 groups (mean 1.7), 70% `ORGANIZATION` with 0-20 role entries (7.7 per response
/// on average), 30% `CONSUMER` without roles; roles `MEMBER` (a value this version does not know),
/// `ADMIN`, `NONE`; product ids `p0`... drawn log-uniformly over 2,000 products (a few products are
/// common, most are rare), and 5% unknown ids (`x...`) that no policy names.
/// Policies: a few group-level rules by `groupType`, the rest role-level rules on one product each,
/// with the mix of conditions of the shared policies; every rule grants 1-3 capabilities.
struct WorkloadGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    /// SplitMix64: small, fast and the same on every platform.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func int(below bound: Int) -> Int { Int(next() % UInt64(bound)) }

    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// An index drawn from `weights` (not necessarily normalised).
    mutating func weighted(_ weights: [Double]) -> Int {
        var remaining = unit() * weights.reduce(0, +)
        for (index, weight) in weights.enumerated() {
            remaining -= weight
            if remaining < 0 { return index }
        }
        return weights.count - 1
    }

    // MARK: Responses

    /// Role entries per `ORGANIZATION` group: the shared workload's histogram for 0...20.
    static let entryCountWeights: [Double] = [
        1096, 1111, 1111, 1069, 1028, 963, 876, 739, 614, 523, 459, 398, 309, 251, 238, 236, 238, 217, 186, 189, 212,
    ]

    mutating func productID(products: Int = 2000) -> String {
        if unit() < 0.05 { return "x\(int(below: 10_000))" }
        let index = Int(exp(unit() * log(Double(products + 1)))) - 1
        return "p\(min(max(index, 0), products - 1))"
    }

    mutating func role() -> Role {
        switch weighted([55, 25, 20]) {
        case 0: Role("MEMBER")
        case 1: .admin
        default: .unassigned
        }
    }

    mutating func groupID() -> String {
        String(100_000_000_000_000_000 + int(below: 800_000_000_000_000_000))
    }

    mutating func response() -> GetCustomerGroupsResponse {
        let groupCount = weighted([5, 45, 30, 12, 8])
        return GetCustomerGroupsResponse(
            groups: (0..<groupCount).map { _ in
                if unit() < 0.3 { return GroupEntry(groupID: groupID(), groupType: .consumer) }
                let entries = weighted(Self.entryCountWeights)
                return GroupEntry(
                    groupID: groupID(),
                    groupType: .organization,
                    roles: (0..<entries).map { _ in RoleEntry(productID: productID(), role: role()) }
                )
            }
        )
    }

    // MARK: Policies

    /// A `group-policy/v1` policy of `rules` grant rules over `products` products and
    /// `capabilities` capabilities; `denyEvery` > 0 makes every n-th rule a deny.
    mutating func policyJSON(rules: Int, products: Int, capabilities: Int, denyEvery: Int = 0) -> String {
        var json = #"{"format":"group-policy/v1","id":"bench-R\#(rules)","capabilities":{"#
        json += (0..<capabilities).map { #""cap\#($0)":"cap\#($0)""# }.joined(separator: ",")
        json += #"},"rules":["#
        let groupLevel = min(4, max(1, rules / 25))
        for index in 0..<rules {
            if index > 0 { json += "," }
            json += #"{"id":"r\#(index)""#
            if denyEvery > 0 && index % denyEvery == denyEvery - 1 { json += #","effect":"deny""# }
            let granted = weighted([50, 35, 15]) + 1
            var names: [Int] = []
            while names.count < min(granted, capabilities) {
                let name = int(below: capabilities)
                if !names.contains(name) { names.append(name) }
            }
            json += #","capabilities":["# + names.map { #""cap\#($0)""# }.joined(separator: ",") + "]"
            if index < groupLevel {
                json += #","match":{"groupType":"\#(index % 2 == 0 ? "CONSUMER" : "ORGANIZATION")"}}"#
                continue
            }
            let product = #""productId":"p\#(int(below: products))""#
            let role = [#""role":"ADMIN""#, #""role":["ADMIN","MEMBER"]"#, #""role":"MEMBER""#, #""role":"NONE""#][
                weighted([35, 29, 25, 11])
            ]
            let organization = #""groupType":"ORGANIZATION""#
            let match: String =
                switch weighted([53, 33, 7, 7]) {
                case 0: [organization, product, role].joined(separator: ",")
                case 1: [product, role].joined(separator: ",")
                case 2: [organization, product].joined(separator: ",")
                default: product
                }
            json += #","match":{\#(match)}}"#
        }
        return json + "]}"
    }
}
