import GroupDecisions
import GroupPolicy
import GroupPolicyBasics

/// Why a shadow report's JSON was refused: not the format `ShadowReport.jsonBytes(pretty:)`
/// writes.
package struct ShadowReportRefusal: Error {
    /// One line starting with the file, line and column, then the JSON path: what is wrong.
    package var message: String
    /// The JSON path of the offending value, when the refusal names one.
    package var jsonPath: String?
}

extension ShadowReport {
    /// The most bytes of report JSON ``init(jsonBytes:fileName:)`` reads: 64 MiB, four times what
    /// a service's report takes at most (``maximumReportBytes``).
    package static let maximumJSONBytes = 64 << 20

    /// Reads a report from its JSON (``jsonBytes(pretty:)``'s format), strictly: every key
    /// required, no other key, each value of its type, and the counts consistent with each other.
    ///
    /// The rows are put in the report's order (see ``changes``), whatever their order in the file.
    /// It reads the bytes in one pass and keeps only the report, so its memory is a small multiple
    /// of the input's size and its time grows with that size, whatever the input holds; a rule
    /// list may be longer than ``maximumRulesPerList`` (reports from before the limit).
    ///
    /// - Parameters:
    ///   - jsonBytes: The report's JSON, at most ``maximumJSONBytes``.
    ///   - fileName: The file's name for the error's location; `nil` for bytes from memory.
    /// - Throws: ``ShadowReportRefusal`` for the file's syntax error if it is not JSON, otherwise
    ///   for the first problem in the file, its message on one line starting with
    ///   `file:line:column: json.path: `.
    package init(jsonBytes: [UInt8], fileName: String? = nil) throws(ShadowReportRefusal) {
        let read: Result<ShadowReport?, ShadowReportReader.Problem> = jsonBytes.withUnsafeBufferPointer { bytes in
            guard bytes.count <= Self.maximumJSONBytes else {
                return .failure(
                    ShadowReportReader.Problem(
                        offset: 0,
                        path: .root,
                        message: "file of \(bytes.count) bytes is over the limit of \(Self.maximumJSONBytes) bytes"
                    )
                )
            }
            var reader = ShadowReportReader(bytes: bytes)
            do throws(JSONSyntaxError) {
                let report = try reader.readDocument()
                if let problem = reader.problem { return .failure(problem) }
                return .success(report)
            } catch {
                return .failure(
                    ShadowReportReader.Problem(
                        offset: error.offset,
                        path: error.path,
                        message: "invalid JSON: \(error.message)"
                    )
                )
            }
        }
        switch read {
        case .success(var report?):
            report.changes.sort(by: ShadowReport.Change.precedes)
            self = report
        case .success(nil):
            throw ShadowReportRefusal(message: "\(fileName ?? "<input>"): not a shadow report")
        case .failure(let problem):
            let (line, column) = Self.lineAndColumn(of: problem.offset, in: jsonBytes)
            let place = SourcePosition(file: fileName, line: line, column: column)
            throw ShadowReportRefusal(
                message: "\(place): \(problem.path): \(problem.message)".escapingControlCharacters,
                jsonPath: problem.path.description
            )
        }
    }

    /// The 1-based line and column (in Unicode scalars) of the byte at `offset`, as `SourceText`
    /// gives them, found by one scan up to it instead of an index of every line.
    private static func lineAndColumn(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        bytes.withUnsafeBufferPointer { buffer in
            var line = 1
            var column = 1
            for index in 0..<max(0, min(offset, buffer.count)) {
                let byte = buffer[index]
                if byte == 0x0A {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    // Continuation bytes do not start a new scalar.
                    column += 1
                }
            }
            return (line, column)
        }
    }
}
