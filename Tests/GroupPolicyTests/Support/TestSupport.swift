#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing

@testable import GroupPolicy

/// The package root, found from this file's path (tests read `Policies/` and `Examples/`).
let packageRoot: String = {
    var path = #filePath
    for _ in 0..<4 {
        guard let slash = path.lastIndex(of: "/") else { break }
        path = String(path[..<slash])
    }
    return path
}()

func repositoryFile(_ relative: String) -> String { packageRoot + "/" + relative }

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

func response(_ json: String) throws -> GetCustomerGroupsResponse {
    try GetCustomerGroupsResponse(jsonBytes: bytes(json))
}

/// A policy from JSON text; `body` is spliced into a policy with the given capabilities.
func policy(_ json: String, fileName: String = "test.json") throws -> Policy {
    try Policy(jsonBytes: bytes(json), fileName: fileName)
}

/// A policy document built from parts: capabilities (names), rules and extra top-level members.
func policy(capabilities: [String], rules: String, extra: String = "") throws -> Policy {
    let declarations = capabilities.map { "\"\($0)\": \"\($0)\"" }.joined(separator: ", ")
    return try policy(
        """
        { "format": "group-policy/v1", "id": "p", "capabilities": { \(declarations) },
          "rules": \(rules)\(extra.isEmpty ? "" : ", " + extra) }
        """
    )
}

/// The diagnostics a policy text produces: errors from the thrown error, or warnings if it loads.
func diagnostics(_ json: String, fileName: String = "test.json") -> [Diagnostic] {
    do {
        return try Policy(jsonBytes: bytes(json), fileName: fileName).warnings
    } catch let error as GroupPolicyError {
        return error.diagnostics
    } catch {
        Issue.record("unexpected error \(error)")
        return []
    }
}

/// The single error a policy text produces (records a failure otherwise).
func singleError(_ json: String, fileName: String = "test.json") -> Diagnostic? {
    let errors = diagnostics(json, fileName: fileName).filter { $0.severity == .error }
    #expect(errors.count == 1, "expected one error, got \(errors.map(\.description))")
    return errors.first
}

let sandbox = EvaluationContext(environment: .sandbox)
let production = EvaluationContext(environment: .production)

/// A new, empty directory under the system's temporary directory; the caller removes it.
func makeTemporaryDirectory(_ prefix: String) throws -> String {
    let directory = FileManager.default.temporaryDirectory.path + "/\(prefix)-\(UInt64.random(in: 0...UInt64.max))"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    return directory
}
