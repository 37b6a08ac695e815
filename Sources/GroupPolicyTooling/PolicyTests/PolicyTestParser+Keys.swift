import GroupPolicy

extension PolicyTestParser {
    /// The keys each object of a policy test file may hold: the loader rejects any other, and a
    /// test holds `Policies/schema/group-policy-tests.schema.json` to the same lists.
    enum Keys {
        static let document = ["format", "policy", "cases"]
        static let testCase = ["name", "context", "response", "responseFile", "expect"]
        static let context = ["environment", "entitlements"]
        static let expect = ["capabilities", "includes", "excludes", "groups", "workspaces"]
        static let membership = ["workspace", "groupId", "role"]
    }
}
