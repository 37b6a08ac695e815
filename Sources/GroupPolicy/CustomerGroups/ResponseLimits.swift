/// Bounds on the Apple documents GroupPolicy decodes, so hostile or broken input costs bounded
/// work and memory instead of whatever it asks for.
///
/// The defaults sit far above anything Apple sends (an app has at most 10,000 in-app products, a
/// customer is in a handful of groups) and far below what would hurt a server.
public struct ResponseLimits: Sendable, Hashable {
    /// The largest document accepted, in bytes.
    ///
    /// Default 1 MiB, the fetcher's body limit.
    public var maximumBytes: Int
    /// The most groups one Get Customer Groups response may hold.
    ///
    /// Default 10,000.
    public var maximumGroups: Int
    /// The most role entries one group entry of a response may hold.
    ///
    /// Default 10,000.
    public var maximumRoleEntriesPerGroup: Int
    /// The most members one Get Group Members page may hold.
    ///
    /// Default 10,000 (Apple sends at most 100).
    public var maximumMembers: Int
    /// The deepest JSON nesting accepted, counting every object and array.
    ///
    /// Default 32.
    public var maximumDepth: Int

    /// Creates limits; every parameter defaults to the documented default.
    public init(
        maximumBytes: Int = 1 << 20,
        maximumGroups: Int = 10_000,
        maximumRoleEntriesPerGroup: Int = 10_000,
        maximumMembers: Int = 10_000,
        maximumDepth: Int = 32
    ) {
        self.maximumBytes = maximumBytes
        self.maximumGroups = maximumGroups
        self.maximumRoleEntriesPerGroup = maximumRoleEntriesPerGroup
        self.maximumMembers = maximumMembers
        self.maximumDepth = maximumDepth
    }

    /// The documented defaults.
    public static let `default` = ResponseLimits()
}
