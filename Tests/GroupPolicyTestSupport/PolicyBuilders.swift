package import GroupPolicy

/// The UTF-8 bytes of a text.
package func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A decoded customer-groups response from JSON text.
package func response(_ json: String) throws -> GetCustomerGroupsResponse {
    try GetCustomerGroupsResponse(jsonBytes: bytes(json))
}

/// A policy from JSON text.
package func policy(_ json: String, fileName: String = "test.json") throws -> Policy {
    try Policy(jsonBytes: bytes(json), fileName: fileName)
}

/// A policy document built from parts: capabilities (names), rules and extra top-level members.
package func policy(capabilities: [String], rules: String, extra: String = "") throws -> Policy {
    let declarations = capabilities.map { "\"\($0)\": \"\($0)\"" }.joined(separator: ", ")
    return try policy(
        """
        { "format": "group-policy/v1", "id": "p", "capabilities": { \(declarations) },
          "rules": \(rules)\(extra.isEmpty ? "" : ", " + extra) }
        """
    )
}

/// A sandbox context without entitlements.
package let sandbox = EvaluationContext(environment: .sandbox)
/// A production context without entitlements.
package let production = EvaluationContext(environment: .production)
