import GroupPolicyBasics

/// The warnings of the DocC article "Policy file format", section "Load-time validation", that need
/// the whole document: things that load but are almost certainly not what the author meant.
/// (Unknown `groupType`/`role` values are warned about while parsing, where their locations are at
/// hand.)
enum PolicyWarnings {
    static func check(_ document: PolicyDocument, rootOffset: Int, rulesNode: JSONNode?, collector: DiagnosticCollector)
    {
        if document.rules.isEmpty {
            collector.warning(
                .noRules,
                at: rulesNode?.offset ?? rootOffset,
                JSONPath.root.appending("rules"),
                "the policy has no rules, so it grants nothing"
            )
        }
        // Rules are read in place by index: a `for rule in` loop copies every rule it visits.
        let rules = document.rules
        let consumerOnly = ValueCondition.oneOf([GroupType.consumer.rawValue])
        for index in rules.indices
        where rules[index].match.isRoleLevel && rules[index].match.groupTypes == consumerOnly {
            collector.warning(
                .unreachableConsumerRule,
                at: rules[index].offset,
                rules[index].path,
                "rule '\(rules[index].id)' matches role entries but only in CONSUMER groups, which have none: it can never match"
            )
        }
        var granted: Set<String> = []
        for index in rules.indices where rules[index].effect == .grant {
            for capability in rules[index].capabilities { granted.insert(capability) }
        }
        for capability in document.capabilities where !granted.contains(capability.name) {
            collector.warning(
                .capabilityNeverGranted,
                at: capability.offset,
                JSONPath.root.appending("capabilities").appending(capability.name),
                "capability '\(capability.name)' is declared but no rule grants it"
            )
        }
        checkShadowedGrants(document, collector: collector)
    }

    /// A grant rule each of whose capabilities is removed by some deny rule that matches whenever
    /// the grant does ("at least as broad") can never grant anything.
    private static func checkShadowedGrants(_ document: PolicyDocument, collector: DiagnosticCollector) {
        let rules = document.rules
        // Per capability, the deny rules (indices, in rule order) that can cover a grant: those
        // naming no product cover any grant as far as products go; one naming products covers
        // only grants limited to products it names, so it is filed under each of them. A grant
        // then looks at two short lists instead of every deny (policies with many product-specific
        // denies would otherwise cost grants x denies comparisons).
        var anyProduct: [String: [Int]] = [:]
        var byProduct: [String: [String: [Int]]] = [:]
        for index in rules.indices where rules[index].effect == .deny {
            for capability in rules[index].capabilities {
                switch rules[index].match.productIDs {
                case nil, .any?:
                    anyProduct[capability, default: []].append(index)
                case .oneOf(let products)?:
                    for product in products { byProduct[capability, default: [:]][product, default: []].append(index) }
                }
            }
        }
        guard !anyProduct.isEmpty || !byProduct.isEmpty else { return }
        // A lint, so it gives up rather than costing more than its share of loading: comparing many
        // long grants with many long denies is grants x denies x their lists' lengths.
        var remaining = maximumShadowingComparisons
        func listEntries(_ rule: RuleDefinition) -> Int {
            let match = rule.match
            return (match.productIDs?.values.count ?? 0) + (match.roles?.values.count ?? 0)
                + (match.groupTypes?.values.count ?? 0) + (match.groupIDs?.values.count ?? 0)
        }
        func comparable(_ deny: RuleDefinition, _ grant: RuleDefinition) -> Bool {
            remaining -= min(remaining, 1 + listEntries(deny) + listEntries(grant))
            return remaining > 0
        }
        for grantIndex in rules.indices where rules[grantIndex].effect == .grant {
            let grant = rules[grantIndex]
            guard remaining > 0 else { return }
            var shadowing: [String] = []
            let allDenied = grant.capabilities.allSatisfy { capability in
                var candidates = anyProduct[capability] ?? []
                if case .oneOf(let products)? = grant.match.productIDs, let first = products.first {
                    candidates += byProduct[capability]?[first] ?? []
                }
                // The first covering deny in rule order names the warning.
                let deny = candidates.sorted().first { index in
                    comparable(rules[index], grant) && isAtLeastAsBroad(rules[index], as: grant)
                }
                guard let deny, remaining > 0 else { return false }
                if !shadowing.contains(rules[deny].id) { shadowing.append(rules[deny].id) }
                return true
            }
            guard allDenied else { continue }
            let names = shadowing.map { "'\($0)'" }.joined(separator: ", ")
            collector.warning(
                .grantAlwaysDenied,
                at: grant.offset,
                grant.path,
                "grant rule '\(grant.id)' never grants anything: deny rule \(names) removes all its capabilities wherever it matches"
            )
        }
    }

    /// The most list entries the shadowed-grant warning compares while loading one document:
    /// 20,000,000, a fraction of a second; past it the warning is not looked for any further.
    static let maximumShadowingComparisons = 20_000_000

    /// Whether `deny` matches (with its requirements holding) every group `grant` matches.
    static func isAtLeastAsBroad(_ deny: RuleDefinition, as grant: RuleDefinition) -> Bool {
        guard deny.requires.areWeaker(than: grant.requires) else { return false }
        guard covers(deny.match.groupTypes, grant.match.groupTypes), covers(deny.match.groupIDs, grant.match.groupIDs)
        else { return false }
        guard deny.match.isRoleLevel else { return true }
        // A role-level deny covers only role-level grants whose every matching entry it matches too.
        guard grant.match.isRoleLevel else { return false }
        return covers(deny.match.productIDs, grant.match.productIDs) && covers(deny.match.roles, grant.match.roles)
    }

    /// Whether condition `outer` holds for every value `inner` holds for (`nil` is no condition).
    private static func covers(_ outer: ValueCondition?, _ inner: ValueCondition?) -> Bool {
        guard let outer, outer != .any else { return true }
        guard let inner else { return false }
        return inner.isSubset(of: outer)
    }
}
