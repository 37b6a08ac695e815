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

/// A string compared and hashed by its UTF-8 bytes, as the engine compares every name: `String`'s
/// own `==` calls a precomposed "é" equal to "e" followed by a combining accent.
struct ExactString: Hashable, CustomStringConvertible {
    let string: String

    init(_ string: String) { self.string = string }

    var description: String { string }

    static func == (left: ExactString, right: ExactString) -> Bool { left.string.utf8.elementsEqual(right.string.utf8) }

    func hash(into hasher: inout Hasher) {
        for byte in string.utf8 { hasher.combine(byte) }
    }
}

extension String {
    /// The same bytes (see ``ExactString``).
    func isSameBytes(_ other: String) -> Bool { utf8.elementsEqual(other.utf8) }
}

extension RandomInputs {
    /// Group ids and product ids in two spellings `String` calls equal (precomposed "é", and "e"
    /// with a combining accent), which the engine keeps apart.
    static let canonicallyEquivalentNames = ["caf\u{e9}", "cafe\u{301}"]
}
