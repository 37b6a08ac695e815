@testable import GroupPolicy

/// A deliberately naive explainer written straight from the rules of "Explaining a decision": it
/// reads the parsed documents' data only (no matching code of the engine) and writes the compact
/// JSON the explanation must print, key by key.
struct ReferenceExplainer {
    let documents: [PolicyDocument]

    /// The explanation's compact JSON for one capability (declared by the policy).
    func explainJSON(
        _ capability: String,
        _ response: GetCustomerGroupsResponse,
        _ context: EvaluationContext,
        group requested: String? = nil
    ) -> String {
        // Groups with the same id (the same bytes) are one group: first type, all role entries,
        // first position.
        var order: [String] = []
        var types: [ExactString: String] = [:]
        var entries: [ExactString: [RoleEntry]] = [:]
        for group in response.groups {
            let key = ExactString(group.groupID)
            if types[key] == nil {
                order.append(group.groupID)
                types[key] = group.groupType.rawValue
            }
            entries[key, default: []] += group.roles
        }
        var groupObjects: [String] = []
        for groupID in order where requested.map({ $0.isSameBytes(groupID) }) ?? true {
            let key = ExactString(groupID)
            groupObjects.append(explainGroup(capability, groupID, types[key] ?? "", entries[key] ?? [], context))
        }
        return #"{"capability":\#(quote(capability)),"groups":[\#(groupObjects.joined(separator: ","))]}"#
    }

    private func explainGroup(
        _ capability: String,
        _ groupID: String,
        _ groupType: String,
        _ entries: [RoleEntry],
        _ context: EvaluationContext
    ) -> String {
        func object(_ outcome: String, grants: [String] = [], denials: [String] = [], misses: [String] = []) -> String {
            #"{"groupId":\#(quote(groupID)),"groupType":\#(quote(groupType)),"outcome":"\#(outcome)","#
                + #""grants":[\#(grants.joined(separator: ","))],"denials":[\#(denials.joined(separator: ","))],"#
                + #""nearMisses":[\#(misses.joined(separator: ","))]}"#
        }
        if context.environment == .production && groupID.isSameBytes("900000000000000000") { return object("ignored") }

        var grants: [String] = []
        var denials: [String] = []
        var misses: [(count: Int, json: String)] = []
        var granted = false
        for document in documents {
            let aliases = context.environment == .sandbox ? document.productAliases : [:]
            let seen = entries.map { entry in
                RoleEntry(
                    productID: aliases.first { $0.key.isSameBytes(entry.productID) }?.value ?? entry.productID,
                    role: entry.role
                )
            }
            for rule in document.rules where rule.capabilities.contains(capability) {
                let label = documents.count > 1 ? "\(document.id)/\(rule.id)" : rule.id
                var unmet: [String] = []
                if case .oneOf(let types)? = rule.match.groupTypes,
                    !types.contains(where: { $0.isSameBytes(groupType) })
                {
                    unmet.append(#"{"condition":"groupType","expected":\#(list(types)),"actual":\#(quote(groupType))}"#)
                }
                if case .oneOf(let ids)? = rule.match.groupIDs, !ids.contains(where: { $0.isSameBytes(groupID) }) {
                    unmet.append(#"{"condition":"groupId","expected":\#(list(ids)),"actual":\#(quote(groupID))}"#)
                }
                let roleLevel = rule.match.productIDs != nil || rule.match.roles != nil
                let through = seen.indices.filter { index in
                    accepts(rule.match.productIDs, seen[index].productID)
                        && accepts(rule.match.roles, seen[index].role.rawValue)
                }
                if roleLevel && through.isEmpty {
                    let actual = seen.map {
                        #"{"productId":\#(quote($0.productID)),"role":\#(quote($0.role.rawValue))}"#
                    }
                    unmet.append(
                        #"{"condition":"roleEntry","productId":\#(anyOrList(rule.match.productIDs)),"#
                            + #""role":\#(anyOrList(rule.match.roles)),"actual":[\#(actual.joined(separator: ","))]}"#
                    )
                }
                if let environments = rule.requires.environments, !environments.contains(context.environment) {
                    let expected = ["Production", "Sandbox"].filter {
                        environments.contains(StoreEnvironment(rawValue: $0) ?? .production)
                    }
                    let value = expected.count == 1 ? quote(expected[0]) : list(expected)
                    unmet.append(
                        #"{"condition":"environment","expected":\#(value),"actual":"\#(context.environment.rawValue)"}"#
                    )
                }
                let missing = rule.requires.entitlements.filter { required in
                    !context.entitlements.contains { $0.isSameBytes(required) }
                }
                if !missing.isEmpty { unmet.append(#"{"condition":"entitlements","missing":\#(list(missing))}"#) }

                switch rule.effect {
                case .deny:
                    if unmet.isEmpty {
                        denials.append(
                            #"{"capability":\#(quote(capability)),"groupId":\#(quote(groupID)),"rule":\#(quote(label))}"#
                        )
                    }
                case .grant:
                    guard unmet.isEmpty else {
                        misses.append(
                            (unmet.count, #"{"rule":\#(quote(label)),"unmet":[\#(unmet.joined(separator: ","))]}"#)
                        )
                        continue
                    }
                    granted = true
                    let head =
                        #"{"capability":\#(quote(capability)),"groupId":\#(quote(groupID)),"rule":\#(quote(label))"#
                    guard roleLevel else {
                        grants.append(head + "}")
                        continue
                    }
                    var records: [String] = []
                    for index in through {
                        var record = head + #","productId":\#(quote(seen[index].productID))"#
                        if !seen[index].productID.isSameBytes(entries[index].productID) {
                            record += #","sandboxProductId":\#(quote(entries[index].productID))"#
                        }
                        record += #","role":\#(quote(seen[index].role.rawValue))}"#
                        if !records.contains(where: { $0.isSameBytes(record) }) { records.append(record) }
                    }
                    grants += records
                }
            }
        }
        if !granted {
            // Fewest unmet conditions first; equal counts keep rule order (a stable sort by hand).
            var sorted: [String] = []
            for count in 0...5 { sorted += misses.filter { $0.count == count }.map(\.json) }
            return object("notGranted", misses: sorted)
        }
        return denials.isEmpty ? object("granted", grants: grants) : object("denied", grants: grants, denials: denials)
    }

    private func accepts(_ condition: ValueCondition?, _ value: String) -> Bool {
        switch condition {
        case nil, .any?: true
        case .oneOf(let values)?: values.contains { $0.isSameBytes(value) }
        }
    }

    private func anyOrList(_ condition: ValueCondition?) -> String {
        switch condition {
        case nil, .any?: #""*""#
        case .oneOf(let values)?: list(values)
        }
    }

    private func list(_ values: [String]) -> String { "[" + values.map(quote).joined(separator: ",") + "]" }

    /// The random inputs hold no character JSON escapes.
    private func quote(_ text: String) -> String { "\"" + text + "\"" }
}
