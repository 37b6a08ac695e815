import Foundation
import GroupPolicy

/// `group-policy-bench`: the shared decision workload (or a generated one), per R: load, decode,
/// decisions (fast path and with provenance), JSON encoding, mismatches and memory.
@main
enum GroupPolicyBench {
    static func main() {
        let options: BenchOptions
        do {
            guard let parsed = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst())) else { return }
            options = parsed
        } catch {
            FileHandle.standardError.write(Data("\(error.description)\n".utf8))
            exit(2)
        }
        do {
            try run(options)
        } catch {
            FileHandle.standardError.write(Data("Error: \(error.message)\n".utf8))
            exit(2)
        }
    }

    static func run(_ options: BenchOptions) throws(BenchError) {
        #if DEBUG
        FileHandle.standardError.write(Data("warning: a debug build; run with -c release for real figures\n".utf8))
        #endif
        if options.scale && options.profile == "load" {
            let sink = Profiling.profileLoopLoading(ScaleCheck.policyJSON(), iterations: options.iterations)
            print("loaded the scale policy \(options.iterations) times (\(sink) rules)")
            return
        }
        if options.scale {
            let result = try ScaleCheck.run(quick: options.quick)
            print(options.json ? result.json : result.text)
            let wide = try WideGroupCheck.run(quick: options.quick)
            print(options.json ? wide.json : wide.text)
            return
        }
        let workload =
            if let directory = options.dataDirectory {
                try Workload.shared(directory: directory, rules: options.rules, responseLimit: options.responseLimit)
            } else {
                Workload.generated(rules: options.rules, responseLimit: options.responseLimit)
            }
        if let kind = options.profile {
            try Profiling.run(kind, workload: workload, iterations: options.iterations)
            return
        }
        if options.shadow {
            let decoding = try DecodeMeasurement.measure(workload.responseBodies, passes: 1)
            try ShadowMeasurement.printEach(of: workload, responses: decoding.responses, options: options)
            return
        }
        let clockOverhead = clockOverheadNanoseconds()
        let decoding = try DecodeMeasurement.measure(workload.responseBodies, passes: options.passes)
        if !options.json {
            print("workload: \(workload.source), \(workload.responseBodies.count) responses")
            print(
                "decode: median \(format(decoding.median)) ns, p99 \(format(decoding.p99)) ns per response; "
                    + "clock overhead \(format(clockOverhead)) ns per sample"
            )
        }
        var rows: [Row] = []
        for policyCase in workload.policies {
            let row = try measure(
                policyCase,
                responses: decoding.responses,
                responseBodies: workload.responseBodies,
                decoding: decoding,
                options: options,
                clockOverhead: clockOverhead
            )
            rows.append(row)
            if options.json { print(row.json) }
        }
        if !options.json { print(Row.table(rows)) }
        try ServiceMeasurement.printEach(of: workload, responses: decoding.responses, options: options)
        if rows.contains(where: { $0.mismatches > 0 || $0.evaluateMismatches > 0 }) {
            throw BenchError("decisions differ from the expected ones (see mismatches)")
        }
    }

    // MARK: One R

    /// Repetitions per sample: enough that a sample is about a microsecond or more.
    static let decisionRepetitions = 8
    static let evaluateRepetitions = 2

    static func measure(
        _ policyCase: Workload.PolicyCase,
        responses: [GetCustomerGroupsResponse],
        responseBodies: [[UInt8]],
        decoding: DecodeMeasurement,
        options: BenchOptions,
        clockOverhead: Double
    ) throws(BenchError) -> Row {
        let context = EvaluationContext(environment: .production)
        MemoryProbe.trim()
        let peakIsPerR = MemoryProbe.resetPeak()
        let rssBefore = MemoryProbe.status("VmRSS") ?? .nan
        let heapBefore = MemoryProbe.heapInUse()

        // Load and compile, several times; the last policy stays for the rest.
        let (policy, loadTimes) = try timedLoads(options.loads, failure: "policy R=\(policyCase.rules) does not load") {
            () throws(GroupPolicyError) in try policyCase.load()
        }
        let policyHeap = Double(MemoryProbe.heapInUse() - heapBefore) / 1_048_576
        let rssAfterLoad = MemoryProbe.status("VmRSS") ?? .nan

        // Correctness first (also the warm-up): every decision against the expected set.
        var mismatches = 0
        var evaluateMismatches = 0
        for (index, response) in responses.enumerated() {
            let fast = Set(policy.capabilities(for: response, in: context).names)
            let full = Set(policy.evaluate(response, in: context).capabilities.names)
            let expected = policyCase.expected?[index] ?? full
            if fast != expected { mismatches += 1 }
            if full != expected { evaluateMismatches += 1 }
        }

        // The fast path: a warm-up pass, throughput passes, then per-response samples.
        let decide = { (index: Int) -> Int in policy.capabilities(for: responses[index], in: context).count }
        _ = timePass(count: responses.count, decide)
        var passTimes: [Double] = []
        for _ in 0..<options.passes { passTimes.append(timePass(count: responses.count, decide).nanoseconds) }
        let passTime = Statistics(passTimes).median
        // Each decision timed alone (two clock reads around one call, their own cost subtracted),
        // and in batches of back-to-back repetitions of the same decision.
        let single = Statistics(
            timePerInput(count: responses.count, repetitions: 1, passes: options.passes, decide).samples.map {
                max(0, $0 - clockOverhead)
            }
        )
        let batched = Statistics(
            timePerInput(
                count: responses.count,
                repetitions: decisionRepetitions,
                passes: options.passes,
                decide
            ).samples
        )
        let peakRSS = MemoryProbe.status("VmHWM") ?? .nan

        // The full Decision (provenance recorded, not materialised: what a server pays per request),
        // and the Decision's JSON.
        let evaluate = { (index: Int) -> Int in
            let decision = policy.evaluate(responses[index], in: context)
            return decision.capabilities.count &+ decision.grantCount
        }
        let full = Statistics(
            timePerInput(count: responses.count, repetitions: evaluateRepetitions, passes: 1, evaluate).samples
        )
        let decisions = responses.map { policy.evaluate($0, in: context) }
        // With provenance, pretty (the CLI's `--explain` output).
        let encode = Statistics(
            timePerInput(count: responses.count, repetitions: evaluateRepetitions, passes: 1) { index in
                decisions[index].jsonBytes(includingProvenance: true).count
            }.samples
        )
        // Without provenance, compact: what a server answers by default.
        let encodePlain = Statistics(
            timePerInput(count: responses.count, repetitions: evaluateRepetitions, passes: 1) { index in
                decisions[index].jsonBytes(pretty: false).count
            }.samples
        )
        // A server's whole request: Apple's bytes in, the Decision's JSON out.
        let bodies = responseBodies
        let endToEnd = Statistics(
            timePerInput(count: bodies.count, repetitions: evaluateRepetitions, passes: 1) { index in
                guard let response = try? GetCustomerGroupsResponse(jsonBytes: bodies[index]) else { return -1 }
                return policy.evaluate(response, in: context).jsonBytes(pretty: false).count
            }.samples
        )

        // Explaining one capability the policy declares (the first) in every group, in Production.
        let explained = policy.capabilities.first ?? Capability("")
        let explain = { (index: Int) -> Int in
            guard let explanation = try? policy.explain(explained, for: responses[index], in: context) else { return 0 }
            return explanation.groups.reduce(0) { $0 &+ $1.grants.count &+ $1.nearMisses.count }
        }
        let explanation = Statistics(
            timePerInput(count: responses.count, repetitions: evaluateRepetitions, passes: 1, explain).samples
        )

        return Row(
            rules: policyCase.rules,
            products: policyCase.products,
            capabilities: policyCase.capabilities,
            responses: responses.count,
            load: Statistics(loadTimes),
            decodeMedian: decoding.median,
            decodeP99: decoding.p99,
            single: single,
            batched: batched,
            passMean: passTime / Double(responses.count),
            perSecond: Double(responses.count) * 1e9 / passTime,
            mismatches: mismatches,
            evaluateMismatches: evaluateMismatches,
            evaluate: full,
            encode: encode,
            encodePlain: encodePlain,
            endToEnd: endToEnd,
            explain: explanation,
            peakRSS: peakRSS,
            peakIsPerR: peakIsPerR,
            rssBeforeLoad: rssBefore,
            rssAfterLoad: rssAfterLoad,
            policyHeap: policyHeap,
            clockOverhead: clockOverhead,
            repetitions: decisionRepetitions,
            passes: options.passes
        )
    }
}

/// The cost of decoding each response from its JSON bytes, and the decoded responses.
struct DecodeMeasurement {
    var responses: [GetCustomerGroupsResponse]
    var median: Double
    var p99: Double

    static let repetitions = 4

    static func measure(_ bodies: [[UInt8]], passes: Int) throws(BenchError) -> DecodeMeasurement {
        var responses: [GetCustomerGroupsResponse] = []
        responses.reserveCapacity(bodies.count)
        for (line, body) in bodies.enumerated() {
            do {
                responses.append(try GetCustomerGroupsResponse(jsonBytes: body))
            } catch {
                throw BenchError("response \(line + 1) does not decode: \(error)")
            }
        }
        let decode = { (index: Int) -> Int in
            (try? GetCustomerGroupsResponse(jsonBytes: bodies[index]))?.groups.count ?? -1
        }
        let statistics = Statistics(
            timePerInput(count: bodies.count, repetitions: repetitions, passes: passes, decode).samples
        )
        return DecodeMeasurement(responses: responses, median: statistics.median, p99: statistics.p99)
    }
}

/// Loops that run one operation many times, for profilers (callgrind collects only inside).
enum Profiling {
    static func run(_ kind: String, workload: Workload, iterations: Int) throws(BenchError) {
        guard let policyCase = workload.policies.first else { throw BenchError("no policy selected") }
        if kind == "service" {
            try ServiceMeasurement.profile(policyCase, bodies: workload.responseBodies, iterations: iterations)
            return
        }
        let policy: Policy
        do {
            policy = try policyCase.load()
        } catch {
            throw BenchError("policy R=\(policyCase.rules) does not load: \(error)")
        }
        var responses: [GetCustomerGroupsResponse] = []
        for body in workload.responseBodies {
            guard let response = try? GetCustomerGroupsResponse(jsonBytes: body) else {
                throw BenchError("a response does not decode")
            }
            responses.append(response)
        }
        let context = EvaluationContext(environment: .production)
        let decisions = kind.hasPrefix("encode") ? responses.map { policy.evaluate($0, in: context) } : []
        let sink = profileLoop(
            kind,
            policy: policy,
            responses: responses,
            bodies: workload.responseBodies,
            decisions: decisions,
            policyBytes: policyCase.jsonBytes,
            iterations: iterations
        )
        print("\(kind): \(iterations) iterations over \(responses.count) responses, R=\(policyCase.rules) (\(sink))")
    }

    /// Loads a policy `iterations` times (callgrind: `--toggle-collect='*profileLoop*'`).
    @inline(never)
    static func profileLoopLoading(_ bytes: [UInt8], iterations: Int) -> Int {
        var sink = 0
        for _ in 0..<iterations { sink &+= (try? Policy(jsonBytes: bytes))?.ruleCount ?? 0 }
        return sink
    }

    @inline(never)
    static func profileLoop(
        _ kind: String,
        policy: Policy,
        responses: [GetCustomerGroupsResponse],
        bodies: [[UInt8]],
        decisions: [Decision],
        policyBytes: [UInt8],
        iterations: Int
    ) -> Int {
        let context = EvaluationContext(environment: .production)
        var sink = 0
        var index = 0
        for _ in 0..<iterations {
            switch kind {
            case "decision": sink &+= policy.capabilities(for: responses[index], in: context).count
            case "evaluate": sink &+= policy.evaluate(responses[index], in: context).grantCount
            case "encode": sink &+= decisions[index].jsonBytes(includingProvenance: true).count
            case "encode-plain": sink &+= decisions[index].jsonBytes(pretty: false).count
            case "end-to-end":
                if let response = try? GetCustomerGroupsResponse(jsonBytes: bodies[index]) {
                    sink &+= policy.evaluate(response, in: context).jsonBytes(pretty: false).count
                }
            case "explain":
                let capability = policy.capabilities.first ?? Capability("")
                sink &+= (try? policy.explain(capability, for: responses[index], in: context))?.groups.count ?? 0
            case "load": sink &+= (try? Policy(jsonBytes: policyBytes))?.ruleCount ?? 0
            default: sink &+= (try? GetCustomerGroupsResponse(jsonBytes: bodies[index]))?.groups.count ?? 0
            }
            index += 1
            if index == responses.count { index = 0 }
        }
        return sink
    }
}

func format(_ value: Double, decimals: Int = 0) -> String {
    guard value.isFinite else { return "n/a" }
    return String(format: "%.\(decimals)f", value)
}
