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
}
