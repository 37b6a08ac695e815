extension PolicyParser {
    /// The keys each object of a policy file may hold: the loader rejects any other, and a test
    /// holds `Policies/schema/group-policy.schema.json` to the same lists.
    enum Keys {
        static let document = [
            "format", "id", "description", "capabilities", "rules", "workspaces", "sandbox", "invariants",
        ]
        static let capability = ["description", "kind"]
        static let rule = ["id", "description", "effect", "capabilities", "match", "requires"]
        /// `role` is known even in workspaces, so that it gets its own clear error there.
        static let match = ["groupType", "groupId", "productId", "role"]
        static let requires = ["environment", "entitlements"]
        static let workspace = ["id", "description", "match", "adminRoles", "requires"]
        static let sandbox = ["productAliases"]
        static let invariant = ["id", "description", "never", "always"]
        static let invariantBody = ["capabilities", "match", "requires"]
    }

    /// A section that lists objects with ids: its name, what one element is, the keys an element
    /// may hold, and its limit (for the policy set as a whole).
    struct Section {
        var name: String
        var kind: String
        var keys: [String]
        var maximum: KeyPath<PolicyLimits, Int>
        var earlier: KeyPath<PolicySetTotals, Int>

        static var rules: Section {
            Section(name: "rules", kind: "rule", keys: Keys.rule, maximum: \.maximumRules, earlier: \.rules)
        }
        static var workspaces: Section {
            Section(
                name: "workspaces",
                kind: "workspace",
                keys: Keys.workspace,
                maximum: \.maximumWorkspaces,
                earlier: \.workspaces
            )
        }
        static var invariants: Section {
            Section(
                name: "invariants",
                kind: "invariant",
                keys: Keys.invariant,
                maximum: \.maximumInvariants,
                earlier: \.invariants
            )
        }
    }
}
