import GroupPolicy
import GroupPolicyBasics

extension PolicyCheckReport {
    /// The report as JSON: `files`, each with `path`, `kind` (`policy` or `testFile`),
    /// `diagnostics` (its load errors or warnings, then each invariant that does not hold, as
    /// `check` prints them, the rule analysis's warnings included), `invariants` (`id`, `holds`,
    /// `scenarios`, and the `counterexample` test case of a violated one, or `null`) and
    /// `ruleAnalysisSkipped` (why the rules were not analysed, or `null`); then `summary`, with the
    /// counts `check` sums up.
    ///
    /// - Parameter check: The check that made the report, which decides how a finding counts.
    /// - Returns: Compact JSON text.
    public func jsonString(of check: PolicyCheck = PolicyCheck()) -> String {
        var writer = JSONWriter(pretty: false, reservingCapacity: 1024)
        writer.beginObject()
        writer.member("files", objects: files) { writer, file in
            writer.member("path", file.path)
            writer.member("kind", file.kind == .policy ? "policy" : "testFile")
            writer.key("diagnostics")
            writer.beginArray()
            file.error?.writeDiagnostics(to: &writer)
            for diagnostic in file.diagnostics { diagnostic.write(to: &writer) }
            for result in file.invariants { check.diagnostic(for: result)?.write(to: &writer) }
            writer.endArray()
            writer.member("invariants", objects: file.invariants) { writer, result in
                writer.member("id", result.invariantID)
                writer.key("holds")
                writer.bool(result.holds)
                writer.member("scenarios", number: result.scenarioCount)
                writer.member("counterexample", orNull: result.counterexampleTestCase)
            }
            writer.member("ruleAnalysisSkipped", orNull: file.ruleAnalysisSkipped)
        }
        writer.key("summary")
        writer.beginObject()
        writer.member("policies", number: summary.policies)
        writer.member("testFiles", number: summary.testFiles)
        writer.member("errors", number: summary.errors)
        writer.member("warnings", number: summary.warnings)
        writer.member("invariants", number: summary.invariants)
        writer.member("invariantsHolding", number: summary.invariantsHolding)
        writer.endObject()
        writer.endObject()
        return writer.string
    }
}
