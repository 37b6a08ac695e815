import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy

/// The cost of a shadow: the decision service's cache hit without a candidate policy, with an
/// identical one, and with one that decides differently, timed interleaved in one sitting.
///
/// The identical candidate is the same file loaded into a second store: every decision costs one
/// more `evaluate` and a comparison that finds nothing. The changed candidate is the policy without
/// every tenth rule: the decisions it changes are counted in the report's rows too.
struct ShadowMeasurement {
    var rules: Int
    var customers: Int
    /// Nanoseconds per cache hit (median) without a candidate, with the identical one, with the
    /// changed one.
    var withoutMedian: Double
    var identicalMedian: Double
    var changedMedian: Double
    var withoutP99: Double
    var identicalP99: Double
    var changedP99: Double
    /// Nanoseconds per `Policy.evaluate` alone, same order (median).
    var evaluateMedian: Double
    /// The changed candidate's report after the last pass: decisions, changed decisions, rows.
    var decisions: Int
    var changedDecisions: Int
    var skippedDecisions: Int
    var rows: Int

    static func measure(
        _ policyCase: Workload.PolicyCase,
        bodies: [[UInt8]],
        responses: [GetCustomerGroupsResponse],
        passes: Int
    ) throws(BenchError) -> ShadowMeasurement {
        let (without, directory) = try ServiceMeasurement.makeService(policyCase, bodies: bodies)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (identical, identicalDirectory) = try ServiceMeasurement.makeService(policyCase, bodies: bodies)
        defer { try? FileManager.default.removeItem(atPath: identicalDirectory) }
        let (changed, changedDirectory) = try ServiceMeasurement.makeService(policyCase, bodies: bodies)
        defer { try? FileManager.default.removeItem(atPath: changedDirectory) }
        do {
            identical.candidatePolicies = try PolicyStore(contentsOf: identicalDirectory + "/policy.json")
            let path = changedDirectory + "/candidate.json"
            try Data(try withoutEveryTenthRule(policyCase.jsonBytes)).write(to: URL(filePath: path))
            changed.candidatePolicies = try PolicyStore(contentsOf: path)
        } catch {
            throw BenchError("the candidate policies of R=\(policyCase.rules) do not load: \(error)")
        }
        let ids = (0..<responses.count).map { "c\($0)" }
        let services = [without, identical, changed]
        let result = blockingRun { () -> Result<ShadowMeasurement, BenchError> in
            for service in services {
                for id in ids {
                    guard (try? await service.decision(anyTransactionID: id, environment: .production)) != nil else {
                        return .failure(BenchError("customer \(id) was not served"))
                    }
                }
                service.resetShadowReport()
            }
            var samples: [[Double]] = Array(repeating: [], count: services.count)
            var evaluateSamples: [Double] = []
            let policy = without.policies.current
            let context = EvaluationContext(environment: .production)
            var sink = 0
            for pass in 0..<max(1, passes) {
                for response in responses {
                    let start = monotonicNanoseconds()
                    sink &+= policy.evaluate(response, in: context).capabilities.count
                    evaluateSamples.append(Double(monotonicNanoseconds() - start))
                }
                // Each pass starts with another service, so none always runs on the warmest cache.
                for offset in 0..<services.count {
                    let which = (pass + offset) % services.count
                    for id in ids {
                        let start = monotonicNanoseconds()
                        let served = try? await services[which].decision(anyTransactionID: id, environment: .production)
                        samples[which].append(Double(monotonicNanoseconds() - start))
                        guard let served, served.source == .cache else {
                            return .failure(BenchError("customer \(id) was not a cache hit"))
                        }
                        sink &+= served.decision.capabilities.count
                    }
                }
            }
            withExtendedLifetime(sink) {}
            let statistics = samples.map(Statistics.init)
            // Comparisons run off the request path: the report counts them once they are done.
            await changed.waitForShadowComparisons()
            let report = changed.shadowReport
            return .success(
                ShadowMeasurement(
                    rules: policyCase.rules,
                    customers: ids.count,
                    withoutMedian: statistics[0].median,
                    identicalMedian: statistics[1].median,
                    changedMedian: statistics[2].median,
                    withoutP99: statistics[0].percentile(0.99),
                    identicalP99: statistics[1].percentile(0.99),
                    changedP99: statistics[2].percentile(0.99),
                    evaluateMedian: Statistics(evaluateSamples).median,
                    decisions: report.decisions,
                    changedDecisions: report.changedDecisions,
                    skippedDecisions: report.skippedDecisions,
                    rows: report.changes.count
                )
            )
        }
        return try result.get()
    }

    /// The policy's JSON without its rules 0, 10, 20 and so on.
    static func withoutEveryTenthRule(_ json: [UInt8]) throws -> [UInt8] {
        guard var policy = try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any],
            let rules = policy["rules"] as? [Any]
        else { throw BenchError("the workload's policy has no rules list") }
        policy["rules"] = rules.enumerated().filter { $0.offset % 10 != 0 }.map(\.element)
        return Array(try JSONSerialization.data(withJSONObject: policy))
    }

    var text: String {
        "shadow R=\(rules), \(customers) customers: cache hit median \(format(withoutMedian)) ns without a candidate, "
            + "\(format(identicalMedian)) ns with an identical one (+\(format(identicalMedian - withoutMedian))), "
            + "\(format(changedMedian)) ns with one missing every tenth rule "
            + "(+\(format(changedMedian - withoutMedian)); \(changedDecisions) of \(decisions) decisions changed, "
            + "\(skippedDecisions) skipped (queue full), "
            + "\(rows) rows); p99 \(format(withoutP99)) / \(format(identicalP99)) / \(format(changedP99)) ns; "
            + "evaluate alone median \(format(evaluateMedian)) ns"
    }

    var json: String {
        "{\"rules\":\(rules),\"customers\":\(customers),"
            + "\"shadow_without_median_ns\":\(Int(withoutMedian.rounded())),"
            + "\"shadow_identical_median_ns\":\(Int(identicalMedian.rounded())),"
            + "\"shadow_changed_median_ns\":\(Int(changedMedian.rounded())),"
            + "\"shadow_without_p99_ns\":\(Int(withoutP99.rounded())),"
            + "\"shadow_identical_p99_ns\":\(Int(identicalP99.rounded())),"
            + "\"shadow_changed_p99_ns\":\(Int(changedP99.rounded())),"
            + "\"shadow_evaluate_median_ns\":\(Int(evaluateMedian.rounded())),"
            + "\"shadow_changed_decisions\":\(changedDecisions),\"shadow_decisions\":\(decisions),"
            + "\"shadow_skipped_decisions\":\(skippedDecisions),"
            + "\"shadow_rows\":\(rows)}"
    }
}
