import Foundation
import GroupPolicy

/// The scale checks: a generated 100,000-rule policy (load time and memory), and very large
/// responses evaluated against it (fast path and full decision).
enum ScaleCheck {
    struct ResponseFigures {
        var label: String
        var groups: Int
        var entries: Int
        var decode: Statistics
        var fast: Statistics
        var evaluate: Statistics
        var capabilities: Int
        var grants: Int
        var mismatch: Bool
    }

    struct Result {
        var rules: Int
        var products: Int
        var capabilities: Int
        var policyBytes: Int
        var load: Statistics
        var policyHeap: Double
        var peakRSS: Double
        var responses: [ResponseFigures]

        var json: String {
            var text = #"{"scale":true,"R":\#(rules),"P":\#(products),"K":\#(capabilities),"#
            // scale_heap_mb and scale_load_ms are the two scale figures; the other keys stay for
            // scripts that read them.
            text += #""scale_heap_mb":\#(format(policyHeap, decimals: 2)),"#
            text += #""scale_load_ms":\#(format(load.median, decimals: 1)),"loads":\#(load.sorted.count),"#
            text += #""policy_bytes":\#(policyBytes),"load_ms":\#(format(load.median, decimals: 1)),"#
            text += #""load_ms_min":\#(format(load.minimum, decimals: 1)),"#
            text += #""load_ms_max":\#(format(load.maximum, decimals: 1)),"#
            text += #""policy_heap_mb":\#(format(policyHeap, decimals: 2)),"#
            text += #""peak_rss_mb":\#(format(peakRSS, decimals: 1)),"responses":["#
            text += responses.map { figures in
                #"{"label":"\#(figures.label)","groups":\#(figures.groups),"entries":\#(figures.entries),"#
                    + #""decode_us":\#(format(figures.decode.median / 1000, decimals: 1)),"#
                    + #""fast_us":\#(format(figures.fast.median / 1000, decimals: 1)),"#
                    + #""evaluate_us":\#(format(figures.evaluate.median / 1000, decimals: 1)),"#
                    + #""capabilities":\#(figures.capabilities),"grants":\#(figures.grants),"#
                    + #""mismatch":\#(figures.mismatch)}"#
            }.joined(separator: ",")
            return text + "]}"
        }

        var text: String {
            var text = "scale: R=\(rules) rules over P=\(products) products, K=\(capabilities) capabilities "
            text += "(\(policyBytes / 1024) KiB of JSON)\n"
            text += "  heap retained after load (scale_heap_mb): \(format(policyHeap, decimals: 2)) MB "
            text += "(heap in use with the policy loaded minus before it)\n"
            text += "  load time (scale_load_ms): median \(format(load.median, decimals: 1)) ms "
            text += "of \(load.sorted.count) loads "
            text += "(min \(format(load.minimum, decimals: 1)), max \(format(load.maximum, decimals: 1))), "
            text += "bytes in memory to compiled policy\n"
            text += "  peak RSS \(format(peakRSS, decimals: 1)) MB (generating the file and responses included)\n"
            for figures in responses {
                text += "  \(figures.label) (\(figures.groups) groups, \(figures.entries) role entries): "
                text += "decode \(format(figures.decode.median / 1000, decimals: 1)) µs, "
                text += "fast path \(format(figures.fast.median / 1000, decimals: 1)) µs, "
                text += "full decision \(format(figures.evaluate.median / 1000, decimals: 1)) µs "
                text += "(\(figures.capabilities) capabilities, \(figures.grants) grants"
                text += figures.mismatch ? ", MISMATCH)\n" : ", fast = full)\n"
            }
            return text
        }
    }

    static let (rules, products, capabilities) = (100_000, 20_000, 128)

    /// The scale policy: 100,000 rules (every tenth a deny) over 20,000 products, 128 capabilities.
    static func policyJSON() -> [UInt8] {
        var generator = WorkloadGenerator(seed: 100_000)
        return Array(
            generator.policyJSON(rules: rules, products: products, capabilities: capabilities, denyEvery: 10).utf8
        )
    }

    static func run(quick: Bool) throws(BenchError) -> Result {
        var generator = WorkloadGenerator(seed: 100_001)
        let json = policyJSON()
        MemoryProbe.trim()
        _ = MemoryProbe.resetPeak()
        let heapBefore = MemoryProbe.heapInUse()
        let (policy, loadTimes) = try timedLoads(quick ? 1 : 5, failure: "the 100,000-rule policy does not load") {
            () throws(GroupPolicyError) in try Policy(jsonBytes: json)
        }
        let policyHeap = Double(MemoryProbe.heapInUse() - heapBefore) / 1_048_576
        let peakRSS = MemoryProbe.status("VmHWM") ?? .nan

        // 1,000 groups of 10 entries (every tenth group id repeated, so merging is exercised), and
        // one group of 10,000 entries.
        var groups: [GroupEntry] = []
        for index in 0..<1000 {
            let id = index % 10 == 9 ? groups[index - 5].groupID : generator.groupID()
            let entries = (0..<10).map { _ in
                RoleEntry(productID: generator.productID(products: products), role: generator.role())
            }
            groups.append(
                GroupEntry(groupID: id, groupType: index % 7 == 0 ? .consumer : .organization, roles: entries)
            )
        }
        let oneLargeGroup = GroupEntry(
            groupID: generator.groupID(),
            groupType: .organization,
            roles: (0..<10_000).map { _ in
                RoleEntry(productID: generator.productID(products: products), role: generator.role())
            }
        )
        let cases = [
            ("many groups", GetCustomerGroupsResponse(groups: groups)),
            ("one large group", GetCustomerGroupsResponse(groups: [oneLargeGroup])),
        ]
        let runs = quick ? 3 : 21
        var figures: [ResponseFigures] = []
        for (label, response) in cases {
            let body = response.jsonBytes()
            let decode = Statistics(
                timePerInput(count: 1, repetitions: 1, passes: runs) { _ in
                    (try? GetCustomerGroupsResponse(jsonBytes: body))?.groups.count ?? -1
                }.samples
            )
            let fast = Statistics(
                timePerInput(count: 1, repetitions: 1, passes: runs) { _ in
                    policy.capabilities(for: response).count
                }.samples
            )
            let evaluate = Statistics(
                timePerInput(count: 1, repetitions: 1, passes: runs) { _ in
                    policy.evaluate(response).grantCount
                }.samples
            )
            let decision = policy.evaluate(response)
            let fastSet = policy.capabilities(for: response)
            figures.append(
                ResponseFigures(
                    label: label,
                    groups: response.groups.count,
                    entries: response.groups.reduce(0) { $0 + $1.roles.count },
                    decode: decode,
                    fast: fast,
                    evaluate: evaluate,
                    capabilities: fastSet.count,
                    grants: decision.grantCount,
                    mismatch: Set(fastSet.names) != Set(decision.capabilities.names)
                )
            )
        }
        return Result(
            rules: rules,
            products: products,
            capabilities: capabilities,
            policyBytes: json.count,
            load: Statistics(loadTimes),
            policyHeap: policyHeap,
            peakRSS: peakRSS,
            responses: figures
        )
    }
}
