// libFuzzer target: policy files from arbitrary bytes (the position-tracking JSON reader, the v1
// validation, compilation), then evaluation of whatever loads.
//
// Compiled together with Sources/GroupPolicy by Fuzz/fuzz.sh, so internal types are reachable.

let fuzzResponses: [GetCustomerGroupsResponse] = [
    GetCustomerGroupsResponse.sandboxPlaceholder,
    GetCustomerGroupsResponse(groups: [
        GroupEntry(
            groupID: "1",
            groupType: .organization,
            roles: [
                RoleEntry(productID: "p", role: .admin), RoleEntry(productID: "q", role: .unassigned),
                RoleEntry(productID: "p", role: "MEMBER"),
            ]
        ),
        GroupEntry(groupID: "2", groupType: .consumer),
        GroupEntry(groupID: "1", groupType: "OTHER", roles: [RoleEntry(productID: "com.example.pro", role: .admin)]),
    ]),
]

/// libFuzzer's entry point: one input, as bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPolicies(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // The reader alone, with a small depth limit too.
    var reader = JSONReader(maximumDepth: 8)
    _ = try? reader.parse(bytes)
    let policy: Policy
    do {
        policy = try Policy(jsonBytes: bytes, fileName: "fuzz.json")
    } catch let error as GroupPolicyError {
        // Every error says where: a location on each diagnostic.
        guard !error.diagnostics.isEmpty, error.diagnostics.allSatisfy({ $0.location != nil }) else {
            preconditionFailure("a policy error without a located diagnostic: \(error)")
        }
        return 0
    } catch {
        preconditionFailure("an error that is not a GroupPolicyError: \(error)")
    }
    for response in fuzzResponses {
        for environment in StoreEnvironment.allCases {
            let context = EvaluationContext(environment: environment, entitlements: ["e", "com.example.pro"])
            let decision = policy.evaluate(response, in: context)
            guard policy.capabilities(for: response, in: context) == decision.capabilities else {
                preconditionFailure("fast path and full decision disagree")
            }
            _ = decision.jsonString(includingProvenance: true)
        }
    }
    return 0
}
