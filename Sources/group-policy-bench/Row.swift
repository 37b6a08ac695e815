import Foundation

/// The figures for one policy size R.
struct Row {
    var rules: Int
    var products: Int
    var capabilities: Int
    var responses: Int
    var load: Statistics
    var decodeMedian: Double
    var decodeP99: Double
    /// Each decision timed alone, the clock's own cost subtracted: the headline figures.
    var single: Statistics
    /// Batches of back-to-back repetitions of each decision, divided by the repetitions.
    var batched: Statistics
    var passMean: Double
    var perSecond: Double
    var mismatches: Int
    var evaluateMismatches: Int
    var evaluate: Statistics
    /// The Decision's JSON with provenance, pretty (the CLI's `--explain`).
    var encode: Statistics
    /// The Decision's JSON without provenance, compact (a server's default answer).
    var encodePlain: Statistics
    /// Apple's bytes -> decode -> evaluate -> compact JSON without provenance.
    var endToEnd: Statistics
    /// Explaining the policy's first capability for a response, in Production.
    var explain: Statistics
    var peakRSS: Double
    var peakIsPerR: Bool
    var rssBeforeLoad: Double
    var rssAfterLoad: Double
    var policyHeap: Double
    var clockOverhead: Double
    var repetitions: Int
    var passes: Int

    /// One JSON object; the fields the issue asks for come first.
    var json: String {
        let fields: [(String, String)] = [
            ("R", "\(rules)"),
            ("load_ms", format(load.median, decimals: 2)),
            ("decode_ns_median", format(decodeMedian)),
            ("median_ns", format(single.median, decimals: 1)),
            ("p99_ns", format(single.p99, decimals: 1)),
            ("per_second", format(perSecond)),
            ("mismatches", "\(mismatches)"),
            ("peak_rss_mb", format(peakRSS, decimals: 1)),
            ("P", "\(products)"),
            ("K", "\(capabilities)"),
            ("responses", "\(responses)"),
            ("load_ms_min", format(load.minimum, decimals: 2)),
            ("load_ms_max", format(load.maximum, decimals: 2)),
            ("decode_ns_p99", format(decodeP99)),
            ("pass_mean_ns", format(passMean, decimals: 1)),
            ("batched_median_ns", format(batched.median, decimals: 1)),
            ("batched_p99_ns", format(batched.p99, decimals: 1)),
            ("evaluate_mismatches", "\(evaluateMismatches)"),
            ("evaluate_median_ns", format(evaluate.median)),
            ("evaluate_p99_ns", format(evaluate.p99)),
            ("encode_median_ns", format(encode.median)),
            ("encode_p99_ns", format(encode.p99)),
            ("encode_plain_median_ns", format(encodePlain.median)),
            ("encode_plain_p99_ns", format(encodePlain.p99)),
            ("end_to_end_median_ns", format(endToEnd.median)),
            ("end_to_end_p99_ns", format(endToEnd.p99)),
            ("explain_median_ns", format(explain.median)),
            ("explain_p99_ns", format(explain.p99)),
            ("policy_heap_mb", format(policyHeap, decimals: 2)),
            ("rss_before_load_mb", format(rssBeforeLoad, decimals: 1)),
            ("rss_after_load_mb", format(rssAfterLoad, decimals: 1)),
            ("peak_rss_scope", peakIsPerR ? "\"this R\"" : "\"process\""),
            ("clock_overhead_ns", format(clockOverhead, decimals: 1)),
            ("repetitions", "\(repetitions)"),
            ("passes", "\(passes)"),
        ]
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    static func table(_ rows: [Row]) -> String {
        let header = [
            "R", "P", "K", "load ms", "median ns", "p99 ns", "batched ns", "mean ns", "decisions/s", "evaluate ns",
            "encode ns", "plain ns", "end-to-end ns", "explain ns", "mismatches", "policy MB", "peak RSS MB",
        ]
        let lines = rows.map { row in
            [
                "\(row.rules)", "\(row.products)", "\(row.capabilities)", format(row.load.median, decimals: 1),
                format(row.single.median), format(row.single.p99), format(row.batched.median), format(row.passMean),
                format(row.perSecond),
                format(row.evaluate.median), format(row.encode.median), format(row.encodePlain.median),
                format(row.endToEnd.median), format(row.explain.median),
                "\(row.mismatches + row.evaluateMismatches)",
                format(row.policyHeap, decimals: 2), format(row.peakRSS, decimals: 1),
            ]
        }
        let widths = header.indices.map { column in
            ([header] + lines).map { $0[column].count }.max() ?? 0
        }
        func render(_ cells: [String]) -> String {
            cells.enumerated().map { String(repeating: " ", count: widths[$0.offset] - $0.element.count) + $0.element }
                .joined(separator: "  ")
        }
        var text =
            render(header) + "\n"
            + ([render(header.map { String(repeating: "-", count: $0.count) })]
            + lines.map(render)).joined(separator: "\n")
        text += "\n(median/p99: each decision timed alone, the clock's cost subtracted; batched: median of "
        text += "per-response batches of \(rows.first?.repetitions ?? 0) back-to-back decisions; mean and "
        text += "decisions/s: one pass in file order; policy MB: heap retained by the compiled policy; peak RSS: "
        text += "VmHWM while loading and deciding; evaluate: the full Decision, provenance recorded; encode: its JSON "
        text += "with provenance, pretty; plain: without provenance, compact; end-to-end: response bytes -> decode -> "
        text += "evaluate -> plain JSON)"
        return text
    }
}
