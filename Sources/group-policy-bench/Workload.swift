import Foundation
import GroupPolicy

/// The inputs of one benchmark run: response bodies, and the policies with what each should decide.
struct Workload {
    /// One policy of the run: R rules over P products and K capabilities.
    struct PolicyCase {
        var rules: Int
        var products: Int
        var capabilities: Int
        /// Where the policy file is, when it comes from `--data` (loading then includes the read).
        var path: String?
        var jsonBytes: [UInt8]
        /// Line i: the expected capabilities for response i; `nil` for a generated workload, whose
        /// decisions are compared with `Policy.evaluate` instead.
        var expected: [Set<String>]?

        func load() throws(GroupPolicyError) -> Policy {
            if let path { return try Policy(contentsOfFile: path) }
            return try Policy(jsonBytes: jsonBytes)
        }
    }

    var source: String
    var responseBodies: [[UInt8]]
    var policies: [PolicyCase]

    /// The README's shapes: (R, P, K).
    static let shapes = [(10, 5, 8), (100, 20, 16), (1000, 200, 32), (10_000, 2000, 64)]

    /// Reads the shared workload (`responses.jsonl`, `policy_R{R}.json`, `expected_R{R}.jsonl`).
    static func shared(directory: String, rules: [Int]?, responseLimit: Int?) throws(BenchError) -> Workload {
        var bodies = try lines(of: directory + "/responses.jsonl")
        if let responseLimit { bodies = Array(bodies.prefix(responseLimit)) }
        var policies: [PolicyCase] = []
        for (rulesCount, products, capabilities) in shapes where rules?.contains(rulesCount) ?? true {
            let path = directory + "/policy_R\(rulesCount).json"
            guard let data = FileManager.default.contents(atPath: path) else {
                throw BenchError("cannot read \(path)")
            }
            var expected: [Set<String>] = []
            for line in try lines(of: directory + "/expected_R\(rulesCount).jsonl").prefix(bodies.count) {
                guard let names = try? JSONSerialization.jsonObject(with: Data(line)) as? [String] else {
                    throw BenchError("expected_R\(rulesCount).jsonl: a line is not a JSON array of strings")
                }
                expected.append(Set(names))
            }
            guard expected.count == bodies.count else {
                throw BenchError(
                    "expected_R\(rulesCount).jsonl has \(expected.count) lines for \(bodies.count) responses"
                )
            }
            policies.append(
                PolicyCase(
                    rules: rulesCount,
                    products: products,
                    capabilities: capabilities,
                    path: path,
                    jsonBytes: Array(data),
                    expected: expected
                )
            )
        }
        return Workload(source: directory, responseBodies: bodies, policies: policies)
    }

    /// The seed of the generated policy of R rules.
    ///
    /// A policy of 10 or 100 rules is a small sample: how many of its rules name the few popular
    /// products decides how many grants a response gets. These seeds give the generated policies
    /// the grant density of the reference workload the generator imitates (per response: 3.7 grants
    /// and 3.3 capabilities at R = 10, 15.9 and 10.6 at R = 100); at 1,000 and 10,000 rules any seed
    /// does, and R itself is used.
    static func policySeed(rules: Int) -> UInt64 {
        switch rules {
        case 10: 346_010
        case 100: 131_100
        default: UInt64(rules)
        }
    }

    /// Generates the comparable workload deterministically (see `WorkloadGenerator`).
    static func generated(rules: [Int]?, responseLimit: Int?) -> Workload {
        var generator = WorkloadGenerator(seed: 2024)
        let count = responseLimit ?? 10_000
        // Written as one JSON Lines buffer and split again, as the file of the shared workload is
        // read: the bodies then lie in memory as they would from a file, and the timings compare.
        var lines: [UInt8] = []
        for _ in 0..<count {
            lines += generator.response().jsonBytes()
            lines.append(UInt8(ascii: "\n"))
        }
        let bodies = lines.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).map { Array($0) }
        var policies: [PolicyCase] = []
        for (rulesCount, products, capabilities) in shapes where rules?.contains(rulesCount) ?? true {
            var policyGenerator = WorkloadGenerator(seed: Self.policySeed(rules: rulesCount))
            let json = policyGenerator.policyJSON(rules: rulesCount, products: products, capabilities: capabilities)
            policies.append(
                PolicyCase(
                    rules: rulesCount,
                    products: products,
                    capabilities: capabilities,
                    path: nil,
                    jsonBytes: Array(json.utf8),
                    expected: nil
                )
            )
        }
        return Workload(source: "generated", responseBodies: bodies, policies: policies)
    }

    private static func lines(of path: String) throws(BenchError) -> [[UInt8]] {
        guard let data = FileManager.default.contents(atPath: path) else { throw BenchError("cannot read \(path)") }
        return data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).map { Array($0) }
    }
}

/// A failure that stops the benchmark: printed as one `Error:` line, exit status 2.
struct BenchError: Error {
    var message: String

    init(_ message: String) {
        self.message = message
    }
}
