import GroupPolicyBasics

extension PolicyCoverage {
    /// Adds one test file's results to the coverage of the policy it tests.
    ///
    /// Coverage is per tested policy, across every test file that tests it: the results are
    /// recorded into the entry with the suite's policy path, or a new entry is appended, so the
    /// entries stay in order of first appearance. Each distinct decision of the run (cases sharing
    /// a response and a context share one) is recorded once.
    ///
    /// - Parameters:
    ///   - results: Results of the suite's ``PolicyTestSuite/run()``.
    ///   - suite: The suite that produced them.
    ///   - coverages: The coverage so far, one entry per tested policy.
    public static func merge(
        _ results: [PolicyTestResult],
        of suite: PolicyTestSuite,
        into coverages: inout [PolicyCoverage]
    ) {
        if let index = coverages.firstIndex(where: { $0.policyPath.isExactly(suite.policyPath) }) {
            for result in results { coverages[index].record(result) }
            coverages[index].recordedDecisions = []
        } else {
            coverages.append(suite.coverage(of: results))
        }
    }
}
