/// The benchmark's command line.
struct BenchOptions {
    var dataDirectory: String?
    var json = false
    var scale = false
    var quick = false
    var rules: [Int]?
    var responseLimit: Int?
    var passes = 3
    var loads = 5
    var profile: String?
    var iterations = 100_000

    static let usage = "group-policy-bench [--data DIR] [--json] [--quick] [--rules 10,100,...] [--scale]"

    static let help = """
        group-policy-bench: measures GroupPolicy on the shared decision workload (release builds only).

        Usage: \(usage)

        Options:
          --data DIR          The shared workload (responses.jsonl, policy_R*.json, expected_R*.jsonl);
                              without it a comparable workload is generated from a fixed seed.
          --json              One JSON object per R (R, load_ms, decode_ns_median, median_ns, p99_ns,
                              per_second, mismatches, peak_rss_mb, and more).
          --quick             A smoke run of seconds: 1,000 responses, one load, one timed pass.
          --rules LIST        Only these R (comma-separated, from 10, 100, 1000, 10000).
          --responses N       Only the first N responses.
          --passes N          Timed passes over the responses (default 3).
          --loads N           Policy loads timed for load_ms (default 5).
          --scale             Only the scale checks: a generated 100,000-rule policy, and responses of
                              1,000 groups with 10,000 role entries.
          --profile KIND      Only run KIND (decision, evaluate, encode, explain, decode, load)
                              --iterations times in the function profileLoop, for `valgrind --tool=callgrind
                              --toggle-collect='*profileLoop*'`; uses the first of --rules
                              (with --scale, `--profile load` loads the 100,000-rule policy).
          --iterations N      Iterations for --profile (default 100000).
          --help              Show this help.
        """

    static func parse(_ arguments: [String]) throws(BenchError) -> BenchOptions? {
        var options = BenchOptions()
        var index = 0
        func value(_ name: String) throws(BenchError) -> String {
            guard index < arguments.count else { throw BenchError("--\(name) needs a value (usage: \(usage))") }
            index += 1
            return arguments[index - 1]
        }
        func number(_ name: String) throws(BenchError) -> Int {
            let text = try value(name)
            guard let number = Int(text), number > 0 else {
                throw BenchError("--\(name) needs a positive number, not '\(text)'")
            }
            return number
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            switch argument {
            case "--help", "-h": return nil
            case "--data": options.dataDirectory = try value("data")
            case "--json": options.json = true
            case "--scale": options.scale = true
            case "--quick":
                options.quick = true
                options.responseLimit = options.responseLimit ?? 1000
                options.passes = 1
                options.loads = 1
            case "--rules":
                var rules: [Int] = []
                for part in try value("rules").split(separator: ",") {
                    guard let rule = Int(part), Workload.shapes.contains(where: { $0.0 == rule }) else {
                        throw BenchError("--rules takes values from 10, 100, 1000, 10000, not '\(part)'")
                    }
                    rules.append(rule)
                }
                options.rules = rules
            case "--responses": options.responseLimit = try number("responses")
            case "--passes": options.passes = try number("passes")
            case "--loads": options.loads = try number("loads")
            case "--profile":
                let kind = try value("profile")
                guard ["decision", "evaluate", "encode", "explain", "decode", "load"].contains(kind) else {
                    throw BenchError(
                        "--profile takes decision, evaluate, encode, explain, decode or load, not '\(kind)'"
                    )
                }
                options.profile = kind
            case "--iterations": options.iterations = try number("iterations")
            default: throw BenchError("unknown option '\(argument)' (usage: \(usage))")
            }
        }
        return options
    }
}
