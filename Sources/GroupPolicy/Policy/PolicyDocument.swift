/// One policy file as validated: the v1 format's content, with where each part came from.
///
/// Immutable once parsed; compilation turns it into the indexed form evaluation reads.
package struct PolicyDocument: Sendable {
    var fileName: String?
    package var id: String
    /// Where the `id` value starts (set conflicts point at it).
    var idOffset: Int = 0
    var description: String?
    var capabilities: [CapabilityDeclaration]
    package var rules: [RuleDefinition]
    package var workspaces: [WorkspaceDefinition]
    /// Sandbox product id -> the product id the rules use.
    package var productAliases: [String: String]
    package var invariants: [InvariantDefinition]
    /// Warnings found while loading (the document loaded, so it has no errors).
    var warnings: [Diagnostic]
}

/// A declared capability.
package struct CapabilityDeclaration: Sendable, Equatable {
    var name: String
    var description: String?
    var kind: CapabilityKind
    var offset: Int
}

/// Whether a capability only changes presentation, or unlocks content (then only entitlements can
/// grant it).
public enum CapabilityKind: String, Sendable, Hashable, Codable {
    /// Changes what the app presents (controls, screens, menus). The default.
    case presentation
    /// Unlocks content: only rules with non-empty `requires.entitlements` may grant it.
    case content
}

/// A condition on one string attribute: any value, or one of a list (exact, case-sensitive).
package enum ValueCondition: Sendable, Equatable {
    /// `"*"`: every value, including `NONE` and values this version does not know.
    case any
    case oneOf([String])

    package func matches(_ value: String) -> Bool {
        switch self {
        case .any: true
        case .oneOf(let values): values.contains(value)
        }
    }

    /// Whether every value this condition matches is matched by `other` too.
    func isSubset(of other: ValueCondition?) -> Bool {
        guard let other else { return true }
        switch (self, other) {
        case (_, .any): return true
        case (.any, .oneOf): return false
        case (.oneOf(let mine), .oneOf(let theirs)): return mine.allSatisfy(theirs.contains)
        }
    }

    package var values: [String] {
        switch self {
        case .any: []
        case .oneOf(let values): values
        }
    }
}

/// A rule's, workspace's or invariant's `match`.
package struct MatchCondition: Sendable, Equatable {
    package var groupTypes: ValueCondition?
    package var groupIDs: ValueCondition?
    package var productIDs: ValueCondition?
    package var roles: ValueCondition?

    static let everything = MatchCondition()

    /// A match with `productId` or `role` holds per role entry; one without holds per group.
    package var isRoleLevel: Bool { productIDs != nil || roles != nil }

    func matchesGroup(groupID: String, groupType: String) -> Bool {
        (groupTypes?.matches(groupType) ?? true) && (groupIDs?.matches(groupID) ?? true)
    }

    /// Whether a role entry (its product id already aliased) satisfies the role-level conditions.
    package func matchesEntry(productID: String, role: String) -> Bool {
        (productIDs?.matches(productID) ?? true) && (roles?.matches(role) ?? true)
    }
}

/// A `requires` block: conditions on the context, all of which must hold.
package struct Requirements: Sendable, Equatable {
    package var environments: Set<StoreEnvironment>?
    package var entitlements: [String] = []

    static let none = Requirements()

    func hold(in context: EvaluationContext) -> Bool {
        if let environments, !environments.contains(context.environment) { return false }
        return entitlements.allSatisfy(context.entitlements.contains)
    }

    /// Whether these requirements hold in every context in which `other` holds.
    func areWeaker(than other: Requirements) -> Bool {
        if let environments {
            guard let others = other.environments, others.isSubset(of: environments) else { return false }
        }
        return entitlements.allSatisfy(other.entitlements.contains)
    }
}

/// Whether a rule adds or removes its capabilities.
package enum RuleEffect: String, Sendable {
    case grant
    case deny
}

/// One rule of a policy.
package struct RuleDefinition: Sendable {
    var id: String
    var description: String?
    package var effect: RuleEffect
    package var capabilities: [String]
    package var match: MatchCondition
    package var requires: Requirements
    var offset: Int
    package var path: JSONPath
    /// Where the rule starts, for tools that point at it (coverage).
    package var location: SourceLocation?
}

/// One workspace definition.
package struct WorkspaceDefinition: Sendable {
    package var id: String
    var description: String?
    /// Never holds `roles` (rejected at load).
    package var match: MatchCondition
    package var adminRoles: [String]
    var requires: Requirements
    var offset: Int
    package var path: JSONPath
    /// Where the `id` value starts (set conflicts point at it).
    var idOffset: Int
    /// Where the workspace starts, for tools that point at it (coverage).
    package var location: SourceLocation?
}

/// One invariant: a property checked over every scenario (policy-format.md section 6).
package struct InvariantDefinition: Sendable {
    package enum Quantifier: String, Sendable {
        case never
        case always
    }

    package var id: String
    var description: String?
    package var quantifier: Quantifier
    package var capabilities: [String]
    package var match: MatchCondition
    package var requires: Requirements
    var offset: Int
    package var path: JSONPath
    /// Where the invariant starts: a violation is reported there.
    package var location: SourceLocation?
}
