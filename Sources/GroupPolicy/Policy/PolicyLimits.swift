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
    /// The deepest JSON nesting accepted.
    ///
    /// Default 32 (the formats nest at most seven levels).
    public var maximumDepth: Int

    /// Creates limits; every parameter defaults to the documented default.
    public init(
        maximumBytes: Int = 32 << 20,
        maximumRules: Int = 100_000,
        maximumCapabilities: Int = 10_000,
        maximumDepth: Int = 32
    ) {
        self.maximumBytes = maximumBytes
        self.maximumRules = maximumRules
        self.maximumCapabilities = maximumCapabilities
        self.maximumDepth = maximumDepth
    }

    /// The documented defaults.
    public static let `default` = PolicyLimits()
}
