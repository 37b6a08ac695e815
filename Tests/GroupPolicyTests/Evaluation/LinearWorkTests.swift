import Testing

@testable import GroupPolicy

#if DEBUG
/// Every evaluation path does work near-linear in the response.
///
/// The steps its input-dependent loops take (``WorkCounter``, counted in debug builds) for a
/// response twice as large are at most about twice as many. Counts rather than time, so the test
/// cannot race a busy machine.
///
/// One group of 10,000 distinct role entries under one `{"productId": "*", "role": "ADMIN"}` rule
/// granting 100 capabilities took 27 seconds to evaluate when each grant was compared with every
/// earlier grant of its rule.
@Suite struct LinearWorkTests {
    /// One rule granting `capabilities` capabilities through any product's ADMIN entry, and one
    /// granting `extra` to every ORGANIZATION group.
    static func policy(capabilities: Int = 20) throws -> Policy {
        let names = (0..<capabilities).map { "c\($0)" }
        let json = """
            {"format": "group-policy/v1", "id": "wide",
             "capabilities": {\(names.map { "\"\($0)\": \"\($0)\"" }.joined(separator: ", ")), "extra": "x"},
             "rules": [
               {"id": "admins", "capabilities": [\(names.map { "\"\($0)\"" }.joined(separator: ", "))],
                "match": {"productId": "*", "role": "ADMIN"}},
               {"id": "organizations", "capabilities": ["extra"], "match": {"groupType": "ORGANIZATION"}}
             ],
             "workspaces": [{"id": "team", "match": {"productId": "*"}}]}
            """
        return try Policy(jsonBytes: Array(json.utf8))
    }

    /// The shapes of response that made a path quadratic, at a size.
    enum Shape: String, CaseIterable, CustomTestStringConvertible {
        /// One group of distinct ADMIN entries.
        case distinctEntries
        /// One group whose entries repeat two kinds (identical entries yield one grant).
        case repeatedEntries
        /// One group id repeated, one entry per occurrence (a merge of many occurrences).
        case repeatedGroup
        /// Many group ids, each twice with conflicting types (a note per group).
        case conflictingTypes

        var testDescription: String { rawValue }

        func response(size: Int) -> GetCustomerGroupsResponse {
            switch self {
            case .distinctEntries:
                return GetCustomerGroupsResponse(groups: [
                    GroupEntry(
                        groupID: "1",
                        groupType: .organization,
                        roles: (0..<size).map { RoleEntry(productID: "p\($0)", role: .admin) }
                    )
                ])
            case .repeatedEntries:
                return GetCustomerGroupsResponse(groups: [
                    GroupEntry(
                        groupID: "1",
                        groupType: .organization,
                        roles: (0..<size).map { RoleEntry(productID: "p\($0 % 2)", role: .admin) }
                    )
                ])
            case .repeatedGroup:
                return GetCustomerGroupsResponse(
                    groups: (0..<size).map {
                        GroupEntry(
                            groupID: "1",
                            groupType: .organization,
                            roles: [RoleEntry(productID: "p\($0)", role: .admin)]
                        )
                    }
                )
            case .conflictingTypes:
                return GetCustomerGroupsResponse(
                    groups: (0..<2 * size).map {
                        GroupEntry(
                            groupID: "g\($0 / 2)",
                            groupType: $0 % 2 == 0 ? .organization : .consumer,
                            roles: [RoleEntry(productID: "p\($0)", role: .admin)]
                        )
                    }
                )
            }
        }
    }

    /// The steps `body` takes.
    private func steps(_ body: () throws -> Void) rethrows -> Int {
        let counter = WorkCounter()
        try WorkCounter.$current.withValue(counter) { try body() }
        return counter.count
    }

    /// Steps at `size` and at twice `size`: the second at most 2.25 times the first (linear work
    /// doubles; n log n at these sizes grows by about 2.2; quadratic work quadruples).
    private func expectLinear(_ label: String, size: Int = 500, _ work: (Int) throws -> Void) rethrows {
        let single = try steps { try work(size) }
        let doubled = try steps { try work(2 * size) }
        #expect(single >= size, "\(label): \(single) steps at \(size) (nothing counted?)")
        #expect(doubled * 4 <= single * 9, "\(label): \(single) steps at \(size), \(doubled) at \(2 * size)")
    }

    @Test(arguments: Shape.allCases)
    func evaluateIsLinear(shape: Shape) throws {
        let policy = try Self.policy()
        expectLinear("evaluate \(shape)") { size in
            let decision = policy.evaluate(shape.response(size: size))
            _ = decision.jsonBytes(includingProvenance: true, pretty: false)
            _ = decision.notes
            _ = decision.grants
        }
    }

    @Test(arguments: Shape.allCases)
    func fastPathIsLinear(shape: Shape) throws {
        let policy = try Self.policy()
        expectLinear("fast path \(shape)") { size in
            _ = policy.capabilities(for: shape.response(size: size))
        }
    }

    @Test(arguments: Shape.allCases)
    func explainIsLinear(shape: Shape) throws {
        let policy = try Self.policy()
        try expectLinear("explain \(shape)") { size in
            for capability in ["c0", "extra"] {
                _ = try policy.explain(Capability(capability), for: shape.response(size: size)).jsonString(
                    pretty: false
                )
            }
        }
    }

    /// The issue's shape at its size: 100 capabilities through 10,000 distinct entries, a
    /// million grants, each kept.
    @Test func tenThousandEntriesUnderOneRule() throws {
        let policy = try Self.policy(capabilities: 100)
        let response = Shape.distinctEntries.response(size: 10_000)
        let decision = policy.evaluate(response)
        #expect(decision.grantCount == 100 * 10_000 + 1)
        #expect(policy.capabilities(for: response) == decision.capabilities)
        #expect(decision.capabilities.count == 101)
    }
}
#endif
