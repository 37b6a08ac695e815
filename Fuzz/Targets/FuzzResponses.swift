// libFuzzer target: Apple's group documents from arbitrary bytes.
//
// Compiled together with Sources/GroupPolicy by Fuzz/fuzz.sh. Besides "never crash", it checks
// what must hold for every input that decodes: encode -> decode is the identity, and the fast path
// agrees with the full decision under a fixed policy in both environments.

let fuzzPolicyJSON = """
    { "format": "group-policy/v1", "id": "fuzz",
      "capabilities": { "view": "v", "manage": "m", "export": "e", "family": "f", "content": { "kind": "content" } },
      "rules": [
        { "id": "seats", "match": { "groupType": "ORGANIZATION", "role": "*" }, "capabilities": ["view"] },
        { "id": "admins", "match": { "productId": ["p", "com.example.pro"], "role": "ADMIN" }, "capabilities": ["manage", "export"] },
        { "id": "family", "match": { "groupType": "CONSUMER" }, "capabilities": ["family"] },
        { "id": "no-export", "effect": "deny", "match": { "role": "NONE" }, "capabilities": ["export"] },
        { "id": "pilot", "match": { "groupId": ["1", "900000000000000000"] }, "capabilities": ["export"] },
        { "id": "content", "requires": { "entitlements": ["e"] }, "capabilities": ["content"] }
      ],
      "workspaces": [ { "id": "team", "match": { "productId": "*" } } ],
      "sandbox": { "productAliases": { "example.productId.one": "com.example.pro" } } }
    """

let fuzzPolicy: Policy? = try? Policy(jsonBytes: Array(fuzzPolicyJSON.utf8))

/// libFuzzer's entry point: one input, as bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResponses(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let response = try? GetCustomerGroupsResponse(jsonBytes: bytes) {
        guard let again = try? GetCustomerGroupsResponse(jsonBytes: response.jsonBytes()), again == response else {
            preconditionFailure("GetCustomerGroupsResponse does not round-trip")
        }
        if let policy = fuzzPolicy {
            for context in [
                EvaluationContext(environment: .production),
                EvaluationContext(environment: .sandbox, entitlements: ["e"]),
            ] {
                let decision = policy.evaluate(response, in: context)
                guard policy.capabilities(for: response, in: context) == decision.capabilities else {
                    preconditionFailure("fast path and full decision disagree")
                }
                _ = decision.jsonBytes(includingProvenance: true)
            }
        }
    }
    if let members = try? GetGroupMembersResponse(jsonBytes: bytes) {
        guard let again = try? GetGroupMembersResponse(jsonBytes: members.jsonBytes()), again == members else {
            preconditionFailure("GetGroupMembersResponse does not round-trip")
        }
    }
    return 0
}
