import GroupPolicyBasics

extension Explanation {
    /// The explanation for people: a summary line, then one short paragraph per group, the nearest
    /// miss first.
    ///
    /// ```text
    /// capability workspace.manage-seats: granted in 0 of 1 group
    ///
    /// group 281474976710656 (ORGANIZATION): not granted: rule 'pro-admins-manage' needs role ADMIN for com.example.teams.pro; this group has NONE
    /// ```
    ///
    /// Further near misses follow on their own lines, each starting with `  or rule`. No trailing
    /// newline.
    public var text: String {
        var lines: [String] = []
        let name = capability.name
        if !hasGrantRules {
            lines.append("capability \(name): no rule of the policy grants it")
        } else if groups.isEmpty {
            lines.append("capability \(name): the response has no groups")
        } else {
            let granted = groups.count { $0.outcome == .granted }
            lines.append(
                "capability \(name): granted in \(granted) of \(groups.count) group\(groups.count == 1 ? "" : "s")"
            )
        }
        for group in groups {
            lines.append("")
            let heading = "group \(group.groupID) (\(group.groupType.rawValue))"
            switch group.outcome {
            case .granted:
                lines.append("\(heading): granted by \(Self.list(group.grants.map(Self.phrase)))")
            case .denied:
                lines.append(
                    "\(heading): denied by \(Self.list(group.denials.map { "rule '\($0.rule)'" })) "
                        + "(granted by \(Self.list(group.grants.map(Self.phrase))))"
                )
            case .ignored:
                lines.append("\(heading): ignored: Apple's sandbox placeholder gets nothing in Production")
            case .notGranted:
                guard let nearest = group.nearMisses.first else {
                    lines.append("\(heading): not granted: no rule grants \(name)")
                    continue
                }
                lines.append("\(heading): not granted: \(Self.phrase(nearest))")
                for nearMiss in group.nearMisses.dropFirst() { lines.append("  or \(Self.phrase(nearMiss))") }
            }
        }
        // Apple's group ids and types and a policy's names are quoted as they are: a newline or
        // ESC in one must not start a line of its own.
        return lines.map(\.escapingControlCharacters).joined(separator: "\n")
    }

    private static func phrase(_ grant: Grant) -> String {
        guard let productID = grant.productID, let role = grant.role else { return "rule '\(grant.rule)'" }
        let sandbox = grant.sandboxProductID.map { " (sandbox \($0))" } ?? ""
        return "rule '\(grant.rule)' through \(productID)\(sandbox) \(role.rawValue)"
    }

    private static func phrase(_ nearMiss: Explanation.NearMiss) -> String {
        "rule '\(nearMiss.rule)' " + nearMiss.unmet.map(phrase).joined(separator: ", and ")
    }

    private static func phrase(_ condition: Explanation.UnmetCondition) -> String {
        switch condition {
        case .groupType(let expected, let actual):
            return "needs group type \(alternatives(expected)); this group is \(actual.rawValue)"
        case .groupID(let expected, let actual):
            return "needs group \(alternatives(expected)); this is group \(actual)"
        case .roleEntry(let productIDs, let roles, let actual):
            let role = roles.map { "role \(alternatives($0))" } ?? "any role"
            let product = productIDs.map(alternatives) ?? "any product"
            // Indexed once: a rule may list thousands of products and a group hold thousands of
            // entries, and products compare byte for byte.
            let wanted = productIDs.map { names in
                var index = ExactNameIndex()
                for name in names { index.insert(name) }
                return index
            }
            let relevant = actual.filter { entry in wanted.map { $0.index(of: entry.productID) != nil } ?? true }
            let has: String
            if actual.isEmpty {
                has = "this group has no role entries"
            } else if relevant.isEmpty {
                has = "this group has no role for \(product)"
            } else if productIDs?.count == 1 {
                has = "this group has \(relevant.map(\.role.rawValue).joined(separator: ", "))"
            } else {
                has =
                    "this group has "
                    + relevant.map { "\($0.role.rawValue) for \($0.productID)" }.joined(separator: ", ")
            }
            return "needs \(role) for \(product); \(has)"
        case .environment(let expected, let actual):
            return "needs environment \(alternatives(expected.map(\.rawValue))); the context is \(actual.rawValue)"
        case .entitlements(let missing):
            return missing.count == 1
                ? "needs entitlement \(missing[0]); the context lacks it"
                : "needs entitlements \(missing.joined(separator: ", ")); the context lacks them"
        }
    }

    /// `a`, `a or b`, `a, b or c`.
    private static func alternatives(_ values: [String]) -> String {
        guard values.count > 1 else { return values.first ?? "" }
        return values.dropLast().joined(separator: ", ") + " or " + values[values.count - 1]
    }

    /// `a`, `a and b`, `a, b and c`.
    private static func list(_ values: [String]) -> String {
        guard values.count > 1 else { return values.first ?? "" }
        return values.dropLast().joined(separator: ", ") + " and " + values[values.count - 1]
    }
}
