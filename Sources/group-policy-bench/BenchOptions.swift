import ArgumentParsing

/// The benchmark's command line.
struct BenchOptions {
    var dataDirectory: String?
    var json = false
    var scale = false
    var shadow = false
    var quick = false
    var rules: [Int]?
    var responseLimit: Int?
    var passes = 3
    var loads = 5
    var profile: String?
    var iterations = 100_000

    static let spec = CommandSpec(
        "group-policy-bench",
        summary: "group-policy-bench: measures GroupPolicy on the shared decision workload (release builds only).",
        options: [
            .init("data", value: "dir", help: "The shared workload (see below); without it, a generated one."),
            .flag("json", help: "One JSON object per R (see below)."),
            .flag("quick", help: "A smoke run of seconds: 1,000 responses, one load, one timed pass."),
            .init("rules", value: "list", help: "Only these R (comma-separated, from 10, 100, 1000, 10000)."),
            .init("responses", value: "n", help: "Only the first N responses."),
            .init("passes", value: "n", help: "Timed passes over the responses (default 3)."),
            .init("loads", value: "n", help: "Policy loads timed for load_ms (default 5)."),
            .flag("scale", help: "Only the scale checks (see below)."),
            .flag("shadow", help: "Only the decision service's cost per decision with a shadow (see below)."),
            .init("profile", value: "kind", help: "Only run KIND --iterations times, for callgrind (see below)."),
            .init("iterations", value: "n", help: "Iterations for --profile (default 100000)."),
        ],
        details: """
            --data DIR holds responses.jsonl, policy_R*.json and expected_R*.jsonl; without it a comparable
            workload is generated from a fixed seed.
            --json prints R, load_ms, decode_ns_median, median_ns, p99_ns, per_second, mismatches,
            peak_rss_mb, and more: evaluate_median_ns (policy.evaluate, the full Decision with provenance
            recorded), encode_median_ns (its JSON with provenance, pretty), encode_plain_median_ns (its JSON
            without provenance, compact, as a server answers), end_to_end_median_ns (response bytes ->
            GetCustomerGroupsResponse(jsonBytes:) -> evaluate -> plain JSON), explain_median_ns.
            --scale runs only the scale checks: a generated 100,000-rule policy, and responses of 1,000 groups
            with 10,000 role entries; then one rule granting 100 capabilities through a group of 10,000 role
            entries (a million grants: fast path, full decision, its JSON, explain).
            --shadow times only the decision service's cache hits without a candidate policy, with an identical
            one and with one missing every tenth rule, interleaved in one sitting (JSON keys shadow_*).
            --profile KIND (decision, evaluate, encode, encode-plain, end-to-end, explain, decode, load, service) runs only
            KIND --iterations times in a function named profileLoop..., for
            `valgrind --tool=callgrind --toggle-collect='*profileLoop*'`;
            it uses the first of --rules (with --scale, `--profile load` loads the 100,000-rule policy).
            `--profile service` (cache hits of the decision service) is async: profile whole runs of two
            --iterations counts and divide the difference by the difference in iterations.
            """
    )

    /// The options, or `nil` when the command line asks for help (printed already).
    static func parse(_ arguments: [String]) throws(UsageError) -> BenchOptions? {
        let parsed: ParsedArguments
        switch try spec.parse(arguments) {
        case .help(let text):
            print(text, terminator: "")
            return nil
        case .run(let arguments):
            parsed = arguments
        }
        func number(_ name: String) throws(UsageError) -> Int? {
            guard let text = parsed.value(name) else { return nil }
            guard let number = Int(text), number > 0 else {
                throw parsed.usageError("--\(name) needs a positive number, not '\(text)'")
            }
            return number
        }
        var options = BenchOptions()
        options.dataDirectory = parsed.value("data")
        options.json = parsed.has("json")
        options.scale = parsed.has("scale")
        options.shadow = parsed.has("shadow")
        if parsed.has("quick") {
            options.quick = true
            options.responseLimit = 1000
            options.passes = 1
            options.loads = 1
        }
        if let list = parsed.value("rules") {
            var rules: [Int] = []
            for part in list.split(separator: ",", omittingEmptySubsequences: false) {
                guard let rule = Int(part), Workload.shapes.contains(where: { $0.0 == rule }) else {
                    throw parsed.usageError("--rules takes values from 10, 100, 1000, 10000, not '\(part)'")
                }
                rules.append(rule)
            }
            options.rules = rules
        }
        options.responseLimit = try number("responses") ?? options.responseLimit
        options.passes = try number("passes") ?? options.passes
        options.loads = try number("loads") ?? options.loads
        if let kind = parsed.value("profile") {
            let kinds = [
                "decision", "evaluate", "encode", "encode-plain", "end-to-end", "explain", "decode", "load", "service",
            ]
            guard kinds.contains(kind) else {
                throw parsed.usageError("--profile takes \(kinds.joined(separator: ", ")), not '\(kind)'")
            }
            options.profile = kind
        }
        options.iterations = try number("iterations") ?? options.iterations
        return options
    }
}
