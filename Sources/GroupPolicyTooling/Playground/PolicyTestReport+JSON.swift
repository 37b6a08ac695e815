import GroupPolicy
import GroupPolicyBasics

extension PolicyTestReport {
    /// The report as JSON: `passed`, `failed` and `testFiles` (the counts `test` ends with);
    /// `files`, each with `path`, `diagnostics` (why it does not load, else empty) and `cases`
    /// (`name`, `passed`, `line`, `failures`, each as `test` prints it, and `explanations`, why
    /// the decision holds or lacks each capability a failure names, when the playground asked for
    /// them); and `coverage`, per
    /// tested policy its `policy` path, the `rules` and `workspaces` with the ids of those no case
    /// exercised (`unexercisedRules`, `unexercisedWorkspaces`).
    ///
    /// - Returns: Compact JSON text.
    public func jsonString() -> String {
        var writer = JSONWriter(pretty: false, reservingCapacity: 1024)
        writer.beginObject()
        writer.member("passed", number: passed)
        writer.member("failed", number: failed)
        writer.member("testFiles", number: testFileCount)
        writer.member("files", objects: files) { writer, file in
            writer.member("path", file.path)
            writer.key("diagnostics")
            writer.beginArray()
            file.error?.writeDiagnostics(to: &writer)
            writer.endArray()
            writer.member("cases", objects: file.results) { writer, result in
                writer.member("name", result.name)
                writer.key("passed")
                writer.bool(result.passed)
                writer.key("line")
                if let line = result.location?.line { writer.number(Int64(line)) } else { writer.null() }
                writer.member("failures", strings: result.failures)
                writer.member("explanations", strings: result.explanations)
            }
        }
        writer.member("coverage", objects: coverage) { writer, coverage in
            writer.member("policy", coverage.policyPath)
            writer.member("rules", strings: coverage.rules.map(\.id))
            writer.member("workspaces", strings: coverage.workspaces.map(\.id))
            writer.member("unexercisedRules", strings: coverage.unexercisedRules.map(\.id))
            writer.member("unexercisedWorkspaces", strings: coverage.unexercisedWorkspaces.map(\.id))
        }
        writer.endObject()
        return writer.string
    }
}
