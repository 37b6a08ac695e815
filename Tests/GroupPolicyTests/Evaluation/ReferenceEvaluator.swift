import GroupPolicyTestSupport

@testable import GroupPolicy

/// A deliberately naive evaluator written straight from the DocC articles "Evaluation semantics"
/// and "Decision JSON".
///
/// No indexes, no bit sets, every rule checked for every group. The optimized evaluator must agree
/// with it.
struct ReferenceEvaluator {
    /// Compared by bytes, field by field (see ``ExactString``).
    struct GrantKey: Hashable {
        var capability, groupID, rule: String
        var productID: String?
        var role: String?
        var sandboxProductID: String?

        private var exact: [ExactString?] {
            [capability, groupID, rule, productID, role, sandboxProductID].map { $0.map(ExactString.init) }
        }
        static func == (left: GrantKey, right: GrantKey) -> Bool { left.exact == right.exact }
        func hash(into hasher: inout Hasher) { hasher.combine(exact) }
    }

    /// Compared by bytes, field by field.
    struct DenialKey: Hashable {
        var capability, groupID, rule: String

        private var exact: [ExactString] { [capability, groupID, rule].map(ExactString.init) }
        static func == (left: DenialKey, right: DenialKey) -> Bool { left.exact == right.exact }
        func hash(into hasher: inout Hasher) { hasher.combine(exact) }
    }

    struct Outcome: Equatable {
        var customer: Set<String> = []
        var groups: [ExactString] = []
        var groupTypes: [ExactString] = []
        var groupCapabilities: [Set<String>] = []
        var workspaces: [ExactString] = []
        var grants: Set<GrantKey> = []
        var denials: Set<DenialKey> = []
        /// Grants and denials as the decision lists them (README, "Provenance order"): by group, then
        /// capability (byte-wise), then rule (document order, then rule order), then role entry;
        /// identical records once.
        var grantList: [GrantKey] = []
        var denialList: [DenialKey] = []
        var noteCount = 0
    }

    let documents: [PolicyDocument]

    func evaluate(_ response: GetCustomerGroupsResponse, _ context: EvaluationContext) -> Outcome {
        var outcome = Outcome()
        // 2.6: merge duplicate group ids (the same bytes), first type wins.
        var order: [String] = []
        var types: [ExactString: String] = [:]
        var entries: [ExactString: [RoleEntry]] = [:]
        var conflict: Set<ExactString> = []
        for group in response.groups {
            let key = ExactString(group.groupID)
            if let type = types[key] {
                if !type.isSameBytes(group.groupType.rawValue) { conflict.insert(key) }
            } else {
                order.append(group.groupID)
                types[key] = group.groupType.rawValue
            }
            entries[key, default: []] += group.roles
        }
        outcome.noteCount = conflict.count
        for groupID in order {
            let groupType = types[ExactString(groupID)] ?? ""
            outcome.groups.append(ExactString(groupID))
            outcome.groupTypes.append(ExactString(groupType))
            if context.environment == .production && groupID.isSameBytes("900000000000000000") {
                outcome.noteCount += 1
                outcome.groupCapabilities.append([])
                continue
            }
            var granted: Set<String> = []
            var denied: Set<String> = []
            var grants: [GrantKey] = []
            var denyRules: [(String, [String])] = []
            for document in documents {
                let aliases = context.environment == .sandbox ? document.productAliases : [:]
                let groupEntries = entries[ExactString(groupID)] ?? []
                let products = groupEntries.map { entry in
                    aliases.first { $0.key.isSameBytes(entry.productID) }?.value ?? entry.productID
                }
                for rule in document.rules {
                    let label = documents.count > 1 ? "\(document.id)/\(rule.id)" : rule.id
                    guard holds(rule.requires, context), holds(rule.match.groupTypes, groupType),
                        holds(rule.match.groupIDs, groupID)
                    else { continue }
                    var through: [Int?] = [nil]
                    if rule.match.productIDs != nil || rule.match.roles != nil {
                        through = groupEntries.indices.filter {
                            holds(rule.match.productIDs, products[$0])
                                && holds(rule.match.roles, groupEntries[$0].role.rawValue)
                        }
                        if through.isEmpty { continue }
                    }
                    if rule.effect == .deny {
                        denied.formUnion(rule.capabilities)
                        denyRules.append((label, rule.capabilities))
                        continue
                    }
                    granted.formUnion(rule.capabilities)
                    for capability in rule.capabilities {
                        for index in through {
                            grants.append(
                                GrantKey(
                                    capability: capability,
                                    groupID: groupID,
                                    rule: label,
                                    productID: index.map { products[$0] },
                                    role: index.map { groupEntries[$0].role.rawValue },
                                    sandboxProductID: index.flatMap {
                                        products[$0].isSameBytes(groupEntries[$0].productID)
                                            ? nil : groupEntries[$0].productID
                                    }
                                )
                            )
                        }
                    }
                }
                for workspace in document.workspaces {
                    guard holds(workspace.requires, context), holds(workspace.match.groupTypes, groupType),
                        holds(workspace.match.groupIDs, groupID)
                    else { continue }
                    let relevant = groupEntries.indices.filter { holds(workspace.match.productIDs, products[$0]) }
                    if workspace.match.productIDs != nil && relevant.isEmpty { continue }
                    let admin = relevant.contains { index in
                        workspace.adminRoles.contains { $0.isSameBytes(groupEntries[index].role.rawValue) }
                    }
                    outcome.workspaces.append(ExactString("\(workspace.id)@\(groupID):\(admin ? "admin" : "member")"))
                }
            }
            let capabilities = granted.subtracting(denied)
            outcome.groupCapabilities.append(capabilities)
            outcome.customer.formUnion(capabilities)
            let surviving = grants.filter { capabilities.contains($0.capability) }
            outcome.grants.formUnion(surviving)
            outcome.grantList += Self.ordered(surviving, by: \.capability)
            var denials: [DenialKey] = []
            for (rule, ruleCapabilities) in denyRules {
                for capability in ruleCapabilities where granted.contains(capability) {
                    outcome.denials.insert(DenialKey(capability: capability, groupID: groupID, rule: rule))
                    denials.append(DenialKey(capability: capability, groupID: groupID, rule: rule))
                }
            }
            outcome.denialList += Self.ordered(denials, by: \.capability)
        }
        return outcome
    }

    /// Stable-sorted by capability name (byte-wise), keeping the first of identical records: the
    /// records arrive in rule order (and entry order within a rule).
    private static func ordered<Record: Hashable>(_ records: [Record], by name: (Record) -> String) -> [Record] {
        var seen: Set<Record> = []
        let unique = records.filter { seen.insert($0).inserted }
        return unique.enumerated().sorted { lhs, rhs in
            let (left, right) = (Array(name(lhs.element).utf8), Array(name(rhs.element).utf8))
            return left != right ? left.lexicographicallyPrecedes(right) : lhs.offset < rhs.offset
        }.map(\.element)
    }

    private func holds(_ condition: ValueCondition?, _ value: String) -> Bool {
        switch condition {
        case nil, .any?: true
        case .oneOf(let values)?: values.contains { $0.isSameBytes(value) }
        }
    }

    private func holds(_ requirements: Requirements, _ context: EvaluationContext) -> Bool {
        (requirements.environments?.contains(context.environment) ?? true)
            && requirements.entitlements.allSatisfy { required in
                context.entitlements.contains { $0.isSameBytes(required) }
            }
    }
}

extension ReferenceEvaluator.Outcome {
    /// The same view of an optimized decision, for comparison.
    init(_ decision: Decision) {
        customer = Set(decision.capabilities.names)
        groups = decision.groups.map { ExactString($0.groupID) }
        groupTypes = decision.groups.map { ExactString($0.groupType.rawValue) }
        groupCapabilities = decision.groups.map { Set($0.capabilities.names) }
        workspaces = decision.workspaces.map { ExactString("\($0.workspace.id)@\($0.groupID):\($0.role.rawValue)") }
        grants = Set(
            decision.grants.map {
                ReferenceEvaluator.GrantKey(
                    capability: $0.capability,
                    groupID: $0.groupID,
                    rule: $0.rule,
                    productID: $0.productID,
                    role: $0.role?.rawValue,
                    sandboxProductID: $0.sandboxProductID
                )
            }
        )
        denials = Set(
            decision.denials.map {
                ReferenceEvaluator.DenialKey(capability: $0.capability, groupID: $0.groupID, rule: $0.rule)
            }
        )
        grantList = decision.grants.map {
            ReferenceEvaluator.GrantKey(
                capability: $0.capability,
                groupID: $0.groupID,
                rule: $0.rule,
                productID: $0.productID,
                role: $0.role?.rawValue,
                sandboxProductID: $0.sandboxProductID
            )
        }
        denialList = decision.denials.map {
            ReferenceEvaluator.DenialKey(capability: $0.capability, groupID: $0.groupID, rule: $0.rule)
        }
        noteCount = decision.notes.count
    }
}
