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

        func load() throws -> Policy {
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

    /// Generates the comparable workload deterministically (see `WorkloadGenerator`).
    static func generated(rules: [Int]?, responseLimit: Int?) -> Workload {
        var generator = WorkloadGenerator(seed: 2024)
        let count = responseLimit ?? 10_000
        let bodies = (0..<count).map { _ in generator.response().jsonBytes() }
        var policies: [PolicyCase] = []
        for (rulesCount, products, capabilities) in shapes where rules?.contains(rulesCount) ?? true {
            var policyGenerator = WorkloadGenerator(seed: UInt64(rulesCount))
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
