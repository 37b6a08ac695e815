/// Bounds on the policy and test files GroupPolicy loads, so a broken or hostile file costs bounded
/// work instead of whatever it asks for.
public struct PolicyLimits: Sendable, Hashable {
    /// The largest file accepted, in bytes.
    ///
    /// Default 32 MiB (a 100,000-rule policy is about 11 MiB).
    public var maximumBytes: Int
    /// The most rules one policy may hold.
    ///
    /// Default 100,000.
    public var maximumRules: Int
    /// The most capabilities one policy may declare.
    ///
    /// Default 10,000.
    public var maximumCapabilities: Int
    /// The most workspaces one policy may define.
    ///
    /// Default 100 (policies define a handful). Every group of a response is matched against
    /// every workspace, and may join each: a decision holds up to groups × workspaces memberships.
    public var maximumWorkspaces: Int
    /// The most invariants one policy may declare.
    ///
    /// Default 1,000. `check` proves each over its own scenario space, at a cost that grows with
    /// the space besides the work the work limit counts.
    public var maximumInvariants: Int
    /// The most names one policy may list, all its lists together: match values (`groupType`,
    /// `groupId`, `productId`, `role`), capabilities of rules and invariants, entitlements,
    /// environments, admin roles, and sandbox aliases (two names each).
    ///
    /// Default 1,000,000 (a 100,000-rule policy naming a type, a product, a role and a capability
    /// per rule lists 400,000). Lists are what a file can make huge in few bytes, and what
    /// compiling and the tools' scenario spaces grow with: this bound keeps loading, `check` and
    /// `diff` within seconds and a few hundred megabytes.
    public var maximumListedNames: Int
    /// The deepest JSON nesting accepted.
    ///
    /// Default 32 (the formats nest at most seven levels).
    public var maximumDepth: Int

    /// Creates limits; every parameter defaults to the documented default.
    public init(
        maximumBytes: Int = 32 << 20,
        maximumRules: Int = 100_000,
        maximumCapabilities: Int = 10_000,
        maximumListedNames: Int = 1_000_000,
        maximumWorkspaces: Int = 100,
        maximumInvariants: Int = 1_000,
        maximumDepth: Int = 32
    ) {
        self.maximumBytes = maximumBytes
        self.maximumRules = maximumRules
        self.maximumCapabilities = maximumCapabilities
        self.maximumListedNames = maximumListedNames
        self.maximumWorkspaces = maximumWorkspaces
        self.maximumInvariants = maximumInvariants
        self.maximumDepth = maximumDepth
    }

    /// The documented defaults.
    public static let `default` = PolicyLimits()
}
