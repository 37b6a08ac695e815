import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The diagnostics a policy text produces: errors from the thrown error, or warnings if it loads.
func diagnostics(_ json: String, fileName: String = "test.json") -> [Diagnostic] {
    do {
        return try Policy(jsonBytes: bytes(json), fileName: fileName).warnings
    } catch {
        return error.diagnostics
    }
}

/// The single error a policy text produces (records a failure otherwise).
func singleError(_ json: String, fileName: String = "test.json") -> Diagnostic? {
    let errors = diagnostics(json, fileName: fileName).filter { $0.severity == .error }
    #expect(errors.count == 1, "expected one error, got \(errors.map(\.description))")
    return errors.first
}
