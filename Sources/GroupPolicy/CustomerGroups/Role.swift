/// A customer's role for one product in an organization group (`role`), an open vocabulary:
/// values Apple adds later decode and keep their raw string.
public struct Role: OpenVocabulary {
    /// The value exactly as Apple sends it.
    public let rawValue: String

    /// Creates a role from Apple's raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `ADMIN`: the customer administers the group for that product.
    public static let admin = Role(rawValue: "ADMIN")
    /// `NONE`: the customer holds a seat and does not administer.
    ///
    /// Named `unassigned` because `.none` would collide with `Optional.none`. Apple has no `MEMBER`.
    public static let unassigned = Role(rawValue: "NONE")

    /// The values this version knows.
    public static let knownValues: [Role] = [.admin, .unassigned]
}
