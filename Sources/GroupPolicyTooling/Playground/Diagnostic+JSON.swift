import GroupPolicy
import GroupPolicyBasics

extension Diagnostic {
    /// Writes the diagnostic as an object: `severity`, `kind`, `file`, `line` and `column` (`null`
    /// without a location), `jsonPath`, `message`, and `description`, the line `check` prints.
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("severity", severity == .error ? "error" : "warning")
        writer.member("kind", kind.rawValue)
        writer.member("file", orNull: location?.file)
        writer.key("line")
        if let line = location?.line { writer.number(Int64(line)) } else { writer.null() }
        writer.key("column")
        if let column = location?.column { writer.number(Int64(column)) } else { writer.null() }
        writer.member("jsonPath", jsonPath)
        writer.member("message", message)
        writer.member("description", description)
        writer.endObject()
    }
}

extension GroupPolicyError {
    /// Writes the error as its diagnostics, or, when it has none, as one error diagnostic at its
    /// location (an unreadable file, a limit), so that every finding reads alike.
    func writeDiagnostics(to writer: inout JSONWriter) {
        guard diagnostics.isEmpty else {
            for diagnostic in diagnostics { diagnostic.write(to: &writer) }
            return
        }
        let kind: Diagnostic.Kind = code == .limitExceeded ? .limitExceeded : .unreadableFile
        Diagnostic(severity: .error, kind: kind, location: location, jsonPath: jsonPath ?? "$", message: message)
            .write(to: &writer)
    }
}
